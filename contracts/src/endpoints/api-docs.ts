/** The API's own description, answered by the gateway: public, and served without a token even with security on. */
import { gatewayEndpoint, route } from "./endpoint.js";
import { Type, type TString } from "@sinclair/typebox";
import { anyObject, either, objectOf, oneOfValues, string, typedSchema } from "./json-schema.js";
import type { OpenApiDocument } from "./openapi.js";

const text = (contentMediaType: string): TString => Type.String({ contentMediaType });

export const apiDocsEndpoints = {
  /** The OpenAPI 3.1 description of every route (openapi.ts), computed once at start. */
  "gateway.openapi": gatewayEndpoint({
    routes: [route("GET", "/openapi.json")],
    reply: typedSchema<OpenApiDocument>(
      objectOf(
        { openapi: oneOfValues(["3.1.0"]), info: objectOf({ title: string, version: string }, { additionalProperties: true }), paths: anyObject },
        { additionalProperties: true },
      ),
    ),
    withoutToken: true,
  }),
  /** Browsable docs of that description: a page whose scripts and styles are all served by the gateway. */
  "gateway.docs": gatewayEndpoint({ routes: [route("GET", "/docs")], reply: text("text/html"), withoutToken: true }),
  /** A script or style sheet of the docs page, by the name the page uses; 404 for any other name. */
  "gateway.docsFile": gatewayEndpoint({
    routes: [route("GET", "/docs/:file")],
    reply: either(text("text/javascript"), text("text/css")),
    withoutToken: true,
  }),
};
