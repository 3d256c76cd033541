// Starts the vendored Swagger UI on /openapi.json (a file, not inline: the page's
// Content-Security-Policy allows no inline script). No validator badge: it would
// ask a remote service about the spec.
"use strict";
window.addEventListener("DOMContentLoaded", () => {
  window.SwaggerUIBundle({
    url: "/openapi.json",
    dom_id: "#swagger-ui",
    deepLinking: true,
    layout: "BaseLayout",
    presets: [window.SwaggerUIBundle.presets.apis, window.SwaggerUIBundle.SwaggerUIStandalonePreset],
    showExtensions: true,
    showCommonExtensions: true,
    persistAuthorization: false,
    validatorUrl: null,
  });
});
