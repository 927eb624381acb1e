/** The API's own description, answered by the gateway: public, and served without a token even with security on. */
import { gatewayEndpoint, route } from "./endpoint.js";
import { anyObject, objectOf, oneOfValues, string, type JsonSchema } from "./json-schema.js";
import type { OpenApiDocument } from "./openapi.js";

const text = (contentMediaType: string): JsonSchema => ({ type: "string", contentMediaType });

export const apiDocsEndpoints = {
  /** The OpenAPI 3.1 description of every route (openapi.ts), computed once at start. */
  "gateway.openapi": gatewayEndpoint<OpenApiDocument>({
    routes: [route("GET", "/openapi.json")],
    reply: objectOf(
      { openapi: oneOfValues(["3.1.0"]), info: objectOf({ title: string, version: string }, { additionalProperties: true }), paths: anyObject },
      { additionalProperties: true },
    ),
    withoutToken: true,
  }),
  /** Browsable docs of that description: a page whose scripts and styles are all served by the gateway. */
  "gateway.docs": gatewayEndpoint<string>({ routes: [route("GET", "/docs")], reply: text("text/html"), withoutToken: true }),
  /** A script or style sheet of the docs page, by the name the page uses; 404 for any other name. */
  "gateway.docsFile": gatewayEndpoint<string>({
    routes: [route("GET", "/docs/:file")],
    reply: { anyOf: [text("text/javascript"), text("text/css")] },
    withoutToken: true,
  }),
};
