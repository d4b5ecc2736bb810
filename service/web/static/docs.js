// Swagger UI (vendored from the npm package swagger-ui-dist 5) on the served contract.
// Nothing leaves this origin: no validator badge, no external fetches.
window.ui = SwaggerUIBundle({
  url: "/openapi.yaml",
  dom_id: "#swagger-ui",
  deepLinking: true,
  validatorUrl: null,
  tryItOutEnabled: false,
  displayRequestDuration: true,
  defaultModelsExpandDepth: 0,
  docExpansion: "list",
  presets: [SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
