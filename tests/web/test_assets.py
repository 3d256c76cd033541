"""The browser's static files: text-only rendering, no inline code, valid modules, vendoring."""

from __future__ import annotations

import hashlib
import importlib.resources
import json
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from recalld.web import STATIC_DIRECTORY

SCRIPTS = sorted((STATIC_DIRECTORY / "js").rglob("*.js"))
PAGES = sorted(STATIC_DIRECTORY.glob("*.html"))
VENDOR = STATIC_DIRECTORY / "vendor" / "swagger-ui"
# Ways a string becomes markup or code; memory content must never reach any of them.
FORBIDDEN_IN_SCRIPTS = (
    "innerHTML",
    "outerHTML",
    "insertAdjacentHTML",
    "document.write",
    "createContextualFragment",
    "DOMParser",
    "eval(",
    "new Function",
    'setAttribute("style"',
    "localStorage",
    "document.cookie",
)


def _code(script: Path) -> str:
    """The script without its comment lines (which may show examples of future pages)."""
    return "\n".join(
        line for line in script.read_text().splitlines() if not line.lstrip().startswith("//")
    )


def test_web_assets_ship_inside_the_package() -> None:
    assert (STATIC_DIRECTORY / "index.html").is_file()
    assert (STATIC_DIRECTORY / "docs.html").is_file()
    assert (STATIC_DIRECTORY / "app.css").is_file()
    assert len(SCRIPTS) >= 10
    # Package data, found through the import system as an installed wheel would find it.
    resources = importlib.resources.files("recalld.web") / "static"
    assert (resources / "js" / "app.js").is_file()
    assert (resources / "vendor" / "swagger-ui" / "swagger-ui-bundle.js").is_file()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda path: path.name)
def test_web_scripts_never_turn_strings_into_markup_or_code(script: Path) -> None:
    text = script.read_text()
    for needle in FORBIDDEN_IN_SCRIPTS:
        assert needle not in text, f"{script.name} uses {needle}"


@pytest.mark.parametrize("page", PAGES, ids=lambda path: path.name)
def test_web_pages_have_no_inline_code_styles_or_remote_origins(page: Path) -> None:
    text = page.read_text()
    assert not re.search(r"<script(?![^>]*\bsrc=)[^>]*>", text), "inline <script>"
    assert "<style" not in text
    assert not re.search(r"\sstyle=", text)
    assert not re.search(r"\son[a-z]+=", text), "inline event handler"
    assert not re.search(r"(?i)(?:src|href)=\"(?:https?:)?//", text), "remote asset"


def test_web_relative_imports_all_resolve() -> None:
    pattern = re.compile(r"""(?:from|import)\s*\(?\s*["'](\.{1,2}/[^"']+)["']""")
    for script in SCRIPTS:
        for target in pattern.findall(_code(script)):
            assert (script.parent / target).resolve().is_file(), f"{script.name} → {target}"


def test_web_every_registered_page_has_its_module() -> None:
    registry = _code(STATIC_DIRECTORY / "js" / "pages.js")
    modules = re.findall(r'registerPage\(\{[^}]*import\("\./pages/([\w-]+)\.js"\)', registry, re.S)
    assert set(modules) >= {
        "search",
        "browse",
        "memory",
        "core",
        "recollections",
        "status",
        "transfer",
        "graph",
        "intentions",
    }
    for module in modules:
        text = (STATIC_DIRECTORY / "js" / "pages" / f"{module}.js").read_text()
        assert "export async function render(" in text or "export function render(" in text


def test_web_scripts_parse_as_es_modules(tmp_path: Path) -> None:
    node = shutil.which("node")
    assert node is not None, "Node.js is installed by scripts/system-deps.sh"
    for script in SCRIPTS:
        # .mjs makes every Node version parse the file as a module.
        copy = tmp_path / f"{script.stem}-{abs(hash(script))}.mjs"
        copy.write_text(script.read_text())
        checked = subprocess.run(
            [node, "--check", str(copy)], capture_output=True, text=True, timeout=60
        )
        assert checked.returncode == 0, f"{script.name}: {checked.stderr}"


def test_web_vendored_swagger_ui_is_unchanged_from_the_recorded_release() -> None:
    note = (VENDOR / "VENDORED.md").read_text()
    recorded = dict(re.findall(r"\| `([^`]+)` \| `([0-9a-f]{64})` \|", note))
    assert set(recorded) == {path.name for path in VENDOR.iterdir() if path.name != "VENDORED.md"}
    for name, digest in recorded.items():
        assert hashlib.sha256((VENDOR / name).read_bytes()).hexdigest() == digest, name
    assert "Apache License" in (VENDOR / "LICENSE").read_text()


# Lays out a star with a tail and a lone node, prints what the layout made of it.
def _node_probe(tmp_path: Path, module: str, probe: str) -> Any:
    """Run ``probe`` (an ES module importing ``./<module>.mjs``, a copy of the browser's
    ``js/<module>.js``) in Node.js and return what it printed as JSON."""
    node = shutil.which("node")
    assert node is not None, "Node.js is installed by scripts/system-deps.sh"
    (tmp_path / f"{module}.mjs").write_text((STATIC_DIRECTORY / "js" / f"{module}.js").read_text())
    (tmp_path / "probe.mjs").write_text(probe)
    ran = subprocess.run(
        [node, str(tmp_path / "probe.mjs")], capture_output=True, text=True, timeout=60
    )
    assert ran.returncode == 0, ran.stderr
    return json.loads(ran.stdout)


FORCE_PROBE = """
import { forceLayout } from "./force.mjs";
const nodes = ["centre", "a", "b", "c", "d", "e", "tail", "lone"].map((id) => ({ id }));
const links = ["a", "b", "c", "d", "e"].map((id) => ({ source: "centre", target: id }));
links.push({ source: "e", target: "tail" });
const first = forceLayout(nodes, links, { width: 600, height: 420, margin: 30, pinned: "centre" });
const again = forceLayout(nodes, links, { width: 600, height: 420, margin: 30, pinned: "centre" });
console.log(JSON.stringify({
  points: Object.fromEntries(first),
  repeated: JSON.stringify([...first]) === JSON.stringify([...again]),
}));
"""


def test_web_force_layout_spreads_nodes_inside_the_drawing(tmp_path: Path) -> None:
    answer = _node_probe(tmp_path, "force", FORCE_PROBE)
    points = {name: (point["x"], point["y"]) for name, point in answer["points"].items()}
    assert answer["repeated"] is True  # deterministic: the same graph is drawn the same way
    assert points["centre"] == (300, 210)  # pinned
    for x, y in points.values():
        assert 30 <= x <= 570
        assert 30 <= y <= 390
    names = sorted(points)
    gaps = [
        ((points[a][0] - points[b][0]) ** 2 + (points[a][1] - points[b][1]) ** 2) ** 0.5
        for index, a in enumerate(names)
        for b in names[index + 1 :]
    ]
    assert min(gaps) > 30  # no two nodes on top of each other

    def distance(a: str, b: str) -> float:
        return float(
            ((points[a][0] - points[b][0]) ** 2 + (points[a][1] - points[b][1]) ** 2) ** 0.5
        )

    # Links pull: the tail sits nearer the node it hangs from than the far side of the star.
    assert distance("tail", "e") < distance("tail", "a")
    assert distance("tail", "e") < distance("tail", "centre")


# The Core page's budget bar after a batch, for entries one of which is part of another.
CORE_BUDGET_PROBE = """
import { projected, size } from "./core-budget.mjs";
const entries = ["likes tea a lot", "likes tea", "Ana's sister is Eva", "Ana"];
console.log(JSON.stringify({
  removed: projected(entries, [{ action: "remove", old_text: "likes tea" }]),
  patched: projected(entries, [{ action: "patch", old_text: "Ana", content: "Ana Lima" }]),
  ambiguous: projected(entries, [{ action: "remove", old_text: "likes" }]),
  inside: projected(entries, [{ action: "remove", old_text: "sister" }]),
  size: size(["añ", "🙂"]),
  // The new text is written as given, "$" and all (String.replace read "$$" as "$").
  dollars: projected(["costs 4", "likes tea"], [
    { action: "patch", old_text: "costs 4", content: "costs $$5 ($& before)" },
    { action: "patch", old_text: "tea", content: "$`green$' tea" },
  ]),
  // The whole entry named with spaces around it is replaced whole, as the server does.
  spaced: projected(["likes tea"], [
    { action: "patch", old_text: " likes tea ", content: "likes coffee" },
  ]),
  // A span found twice in one entry names no span: the server refuses the patch.
  twice: projected(["tea or tea"], [{ action: "patch", old_text: "tea", content: "coffee" }]),
  twiceRemoved: projected(["tea or tea", "x"], [{ action: "remove", old_text: "tea" }]),
  // "00" is twice in "Room 1000", overlapping: the server refuses that patch too.
  overlapping: projected(["Room 1000"], [{ action: "patch", old_text: "00", content: "1" }]),
}));
"""


def test_web_core_budget_projects_the_entry_the_server_edits(tmp_path: Path) -> None:
    answer = _node_probe(tmp_path, "core-budget", CORE_BUDGET_PROBE)
    # An entry given in full is that entry, though a longer one holds it (as the server does).
    assert answer["removed"] == ["likes tea a lot", "Ana's sister is Eva", "Ana"]
    assert answer["patched"] == ["likes tea a lot", "likes tea", "Ana's sister is Eva", "Ana Lima"]
    # Text in several entries names none: the server refuses it, the batch changes nothing.
    assert answer["ambiguous"] == ["likes tea a lot", "likes tea", "Ana's sister is Eva", "Ana"]
    assert answer["inside"] == ["likes tea a lot", "likes tea", "Ana"]
    assert answer["size"] == 4  # code points, with the newline between the entries
    assert answer["dollars"] == ["costs $$5 ($& before)", "likes $`green$' tea"]
    assert answer["spaced"] == ["likes coffee"]
    assert answer["twice"] == ["tea or tea"]
    assert answer["twiceRemoved"] == ["x"]  # a remove takes the whole entry: no span
    assert answer["overlapping"] == ["Room 1000"]


TOKEN_PROBE = """
import { tokenProblem } from "./session.mjs";
console.log(JSON.stringify({
  good: tokenProblem("rcd_0123456789abcdef_secret"),
  quote: tokenProblem("rcd_0_pasted\\u2019from"),
  override: tokenProblem("rcd_0_\\u202esecret"),
  space: tokenProblem("rcd_0_\\u00a0secret"),
}));
"""


def test_web_a_token_problem_never_shows_an_invisible_character(tmp_path: Path) -> None:
    answer = _node_probe(tmp_path, "session", TOKEN_PROBE)
    assert answer["good"] is None
    assert "holds “\u2019” (U+2019) at position 12" in answer["quote"]
    # A right-to-left override shown in the sentence mirrored the rest of it.
    assert "holds U+202E at position 6:" in answer["override"]
    assert "\u202e" not in answer["override"]
    assert "holds U+00A0 at position 6:" in answer["space"]
