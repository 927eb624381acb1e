// Renders the API description named by the page (`data-openapi`) with Swagger UI, served by the gateway itself.
// No validator badge: it would fetch from validator.swagger.io, and the page loads nothing from other hosts.
window.addEventListener("load", () => {
  const root = document.getElementById("swagger-ui");
  window.ui = SwaggerUIBundle({
    url: root.dataset.openapi,
    domNode: root,
    deepLinking: true,
    validatorUrl: null,
    presets: [SwaggerUIBundle.presets.apis],
    layout: "BaseLayout",
  });
});
