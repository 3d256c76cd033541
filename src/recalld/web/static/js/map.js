// A small offline map: no tiles, no network. An SVG centred on a memory's place,
// with range rings, a scale bar, north, and its nearest neighbours as dots placed
// by an equirectangular projection (exact enough over a few kilometres).

import { svg } from "./dom.js";

const WIDTH = 360;
const HEIGHT = 240;
const MARGIN = 18;
const METRES_PER_DEGREE_LAT = 110_540;
const METRES_PER_DEGREE_LON = 111_320;
const EARTH_RADIUS_M = 6_371_000;

/** Great-circle distance in metres. */
export function distanceMetres(from, to) {
  const radians = (degrees) => (degrees * Math.PI) / 180;
  const dLat = radians(to.lat - from.lat);
  const dLon = radians(to.lon - from.lon);
  const a = Math.sin(dLat / 2) ** 2
    + Math.cos(radians(from.lat)) * Math.cos(radians(to.lat)) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_M * Math.asin(Math.min(1, Math.sqrt(a)));
}

/** "850 m", "1.2 km", "40 km". */
export function formatDistance(metres) {
  if (metres < 1000) return `${Math.round(metres)} m`;
  const kilometres = metres / 1000;
  return `${kilometres < 10 ? kilometres.toFixed(1) : Math.round(kilometres)} km`;
}

function niceLength(metres) {
  // The largest 1, 2 or 5 × 10^k not above ``metres``.
  const power = 10 ** Math.floor(Math.log10(Math.max(metres, 1)));
  for (const step of [5, 2, 1]) if (step * power <= metres) return step * power;
  return power;
}

/**
 * The map of ``centre`` ({lat, lon}) and ``neighbours`` ([{place, label, onSelect}]):
 * the view widens to the farthest neighbour (at least 200 m around the point).
 */
export function placeMap(centre, neighbours, centreLabel) {
  const distances = neighbours.map((neighbour) => distanceMetres(centre, neighbour.place));
  const radius = Math.max(200, ...distances.map((distance) => distance * 1.15));
  const scale = (Math.min(WIDTH, HEIGHT) / 2 - MARGIN) / radius;
  const cx = WIDTH / 2;
  const cy = HEIGHT / 2;
  // East-west offset the short way round: across the 180th meridian, -179.9995 is 0.001°
  // west of 179.9995, not 359.999° (which drew the neighbour far outside the map).
  const eastOf = (lon) => ((((lon - centre.lon) % 360) + 540) % 360) - 180;
  const project = (place) => ({
    x: cx + eastOf(place.lon) * Math.cos((centre.lat * Math.PI) / 180) * METRES_PER_DEGREE_LON * scale,
    y: cy - (place.lat - centre.lat) * METRES_PER_DEGREE_LAT * scale,
  });
  const barMetres = niceLength(radius / 2);
  const barPixels = barMetres * scale;

  const drawing = svg("svg", {
    class: "place-map",
    id: "place-map",
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: "img",
    "aria-label": `map around ${centreLabel}`,
  },
  svg("rect", { class: "map-background", x: 0, y: 0, width: WIDTH, height: HEIGHT }),
  [0.5, 1].map((ring) => [
    svg("circle", { class: "map-ring", cx, cy, r: (ring * radius * scale).toFixed(1) }),
    svg("text", { class: "map-ring-label", x: (cx + ring * radius * scale * 0.71 + 3).toFixed(1), y: (cy - ring * radius * scale * 0.71 - 3).toFixed(1) },
      formatDistance(ring * radius)),
  ]),
  svg("line", { class: "map-axis", x1: cx, y1: MARGIN / 2, x2: cx, y2: HEIGHT - MARGIN / 2 }),
  svg("line", { class: "map-axis", x1: MARGIN / 2, y1: cy, x2: WIDTH - MARGIN / 2, y2: cy }),
  svg("text", { class: "map-north", x: cx + 4, y: 14 }, "N"),
  svg("line", { class: "map-scale", x1: 12, y1: HEIGHT - 12, x2: (12 + barPixels).toFixed(1), y2: HEIGHT - 12 }),
  svg("text", { class: "map-scale-label", x: 12, y: HEIGHT - 17 }, formatDistance(barMetres)),
  neighbours.map((neighbour, index) => {
    const point = project(neighbour.place);
    const dot = svg("circle", {
      class: "map-neighbour",
      cx: point.x.toFixed(1),
      cy: point.y.toFixed(1),
      r: 5,
      dataset: { memoryId: neighbour.id },
    }, svg("title", {}, `${neighbour.label} — ${formatDistance(distances[index])}`));
    // A shortcut for the pointer only: inside the map (an image to assistive technology)
    // a focusable dot would be a tab stop no screen reader can name; the keyboard and
    // screen readers use the same links in the list under the map.
    dot.addEventListener("click", neighbour.onSelect);
    return dot;
  }),
  svg("circle", { class: "map-centre", cx, cy, r: 7 }, svg("title", {}, centreLabel)));
  return drawing;
}
