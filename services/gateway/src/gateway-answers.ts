import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { openApiDocument } from "@corral/contracts";
import type { Exchange } from "./http.js";
import { createRouter } from "./router.js";
import type { GatewayRestEndpointName, GatewayRoute, Route } from "./routes.js";

/**
 * What the gateway answers itself, without a service: `/status`, the OpenAPI description of the API
 * (`/openapi.json`, computed once here) and browsable docs of it (`/docs`: Swagger UI from the swagger-ui-dist
 * package, served from node_modules, and a small script of ours; nothing is loaded from another host).
 */
export interface GatewayAnswers {
  /**
   * Answers a `GET` or `HEAD` of a route the table serves without a token (before any authentication); false
   * for every other request. `path` is the whole path, version segment included.
   */
  answerWithoutToken(method: string, path: string, ex: Exchange): boolean;
  answer(endpoint: GatewayRestEndpointName, params: Readonly<Record<string, string>>, ex: Exchange): void;
}

interface StaticFile {
  bytes: Buffer;
  contentType: string;
}

const require = createRequire(import.meta.url);

/** The scripts and style sheets of the docs page, by the name `/docs/{file}` serves them under. */
async function docsFiles(): Promise<Map<string, StaticFile>> {
  const swaggerUi = dirname(require.resolve("swagger-ui-dist/package.json"));
  const sources: Array<[name: string, path: string, contentType: string]> = [
    ["swagger-ui.css", join(swaggerUi, "swagger-ui.css"), "text/css; charset=utf-8"],
    ["swagger-ui-bundle.js", join(swaggerUi, "swagger-ui-bundle.js"), "text/javascript; charset=utf-8"],
    ["init.js", new URL("./docs-page/init.js", import.meta.url).pathname, "text/javascript; charset=utf-8"],
  ];
  const files = await Promise.all(sources.map(async ([name, path, contentType]) => [name, { bytes: await readFile(path), contentType }] as const));
  return new Map(files);
}

/** The docs page: every script and style sheet is one of {@link docsFiles}, named by absolute path on this gateway. */
function docsPage(basePath: string): Buffer {
  const file = (name: string) => `${basePath}/docs/${name}`;
  return Buffer.from(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Corral API</title>
<link rel="stylesheet" href="${file("swagger-ui.css")}">
</head>
<body>
<div id="swagger-ui" data-openapi="${basePath}/openapi.json"></div>
<script src="${file("swagger-ui-bundle.js")}"></script>
<script src="${file("init.js")}"></script>
</body>
</html>
`);
}

/** The browser loads nothing from another host, whatever a script tries (Swagger UI styles some elements inline). */
const DOCS_PAGE_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; frame-ancestors 'none'";

export async function openGatewayAnswers(options: { basePath: string; routes: readonly Route[] }): Promise<GatewayAnswers> {
  const { basePath } = options;
  const version: string = require("../package.json").version;
  const description = Buffer.from(JSON.stringify(openApiDocument({ basePath, version })));
  const page = docsPage(basePath);
  const files = await docsFiles();
  const tokenFree = createRouter(
    options.routes
      .filter((r): r is GatewayRoute => r.access === "public" && r.withoutToken)
      .map((r) => ({ ...r, pattern: `${basePath}${r.pattern}` })),
  );

  const answers: Record<GatewayRestEndpointName, (ex: Exchange, params: Readonly<Record<string, string>>) => void> = {
    "gateway.status": (ex) => ex.json(200, { status: "OK" }),
    "gateway.openapi": (ex) => ex.send(200, description, { "content-type": "application/json" }),
    "gateway.docs": (ex) =>
      ex.send(200, page, { "content-type": "text/html; charset=utf-8", "content-security-policy": DOCS_PAGE_POLICY, "x-content-type-options": "nosniff" }),
    "gateway.docsFile": (ex, params) => {
      const name = params["file"] ?? "";
      const file = files.get(name);
      if (!file) return ex.error(404, "not_found", `the docs have no file ${JSON.stringify(name)}; they have ${[...files.keys()].join(", ")}`);
      ex.send(200, file.bytes, { "content-type": file.contentType, "x-content-type-options": "nosniff", "cache-control": "max-age=3600" });
    },
  };

  return {
    answerWithoutToken(method, path, ex) {
      if (method !== "GET" && method !== "HEAD") return false;
      const match = tokenFree("GET", path);
      if (match.kind !== "found") return false;
      answers[match.route.endpoint](ex, match.params);
      return true;
    },
    answer: (endpoint, params, ex) => answers[endpoint](ex, params),
  };
}
