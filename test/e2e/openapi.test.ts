/**
 * The API description (`GET /v2/openapi.json`) and its browsable docs (`/v2/docs`) on a running Corral with
 * security on: the description is valid OpenAPI 3.1 and lists exactly the routes the gateway serves; both need no
 * identity nor token, while everything else still needs one; the docs page loads nothing from another host.
 * (test/e2e/contract.test.ts checks real answers of every endpoint against the description's schemas.)
 */
import SwaggerParser from "@apidevtools/swagger-parser";
import { endpointList, openApiPath } from "@corral/contracts";
import { apiRoutes } from "@corral/gateway/testing";
import { api, SUPERADMIN } from "../helpers/api.js";
import { loadApiDescription } from "../helpers/api-description.js";
import { testWithSystem } from "../helpers/system-test.js";

const test = testWithSystem({ security: { authService: false } });

test("openapi - the description is valid OpenAPI 3.1 and lists every route of the table, and nothing else", async (t) => {
  const res = await api(t.context.sys.baseUrl, "GET", "/openapi.json");
  t.is(res.status, 200);
  t.is(res.headers.get("content-type"), "application/json");
  const { served, operation } = await loadApiDescription(t.context.sys.baseUrl);
  await t.notThrowsAsync(SwaggerParser.validate(res.body), "swagger-parser finds it valid");
  t.is(served.openapi, "3.1.0");

  // What the gateway serves: the REST routes it routes by, and the event streams it answers before routing.
  const streams = endpointList().flatMap(({ name, endpoint: { stream } }) =>
    stream ? [{ method: stream.route.method, pattern: stream.route.path, endpoint: name, access: stream.access }] : [],
  );
  const routes = [...apiRoutes(), ...streams];
  t.true(streams.length > 0, "the table has event streams");
  const described = Object.entries(served.paths).flatMap(([path, item]) => Object.keys(item).map((method) => `${method.toUpperCase()} ${path}`));
  const routed = routes.map((r) => `${r.method} ${openApiPath(r.pattern)}`);
  t.deepEqual([...described].sort(), [...routed].sort(), "the document's operations are the gateway's routes");
  t.is(new Set(described).size, routes.length, "one operation per route");

  for (const r of routes) {
    const op = operation(r.method, r.pattern)!;
    t.is(op["x-corral-endpoint"], r.endpoint, `${r.method} ${r.pattern}`);
    t.is(op["x-corral-roles"].length === 0, r.access === "public", `${r.method} ${r.pattern}: roles ${op["x-corral-roles"].join(",")}`);
    t.is(op.security.some((s) => s.userId && s.tenantId), r.access !== "public", `${r.method} ${r.pattern}: identity headers`);
    t.truthy(op.responses["200"] ?? op.responses["101"], `${r.method} ${r.pattern}: 200 (101 for the WebSocket)`);
  }
  t.deepEqual(operation("GET", "/tenants")!["x-corral-roles"], ["superadmin"]);
  t.deepEqual(operation("POST", "/providers")!["x-corral-roles"], ["admin", "superadmin"]);
  t.deepEqual(operation("GET", "/clusters")!["x-corral-roles"], ["user", "admin", "superadmin"]);
  t.truthy(operation("POST", "/import")!.responses["403"], "import is denied with 403");
  t.deepEqual(operation("GET", "/status")!.security, [{}, { bearerToken: [] }], "/status: a token with security on");
  t.deepEqual(operation("GET", "/openapi.json")!.security, [], "the description: nothing");
  for (const stream of streams) {
    const op = operation(stream.method, stream.pattern)!;
    const answer = op.responses["200"] ?? op.responses["101"];
    t.truthy(answer && !("$ref" in answer) && (answer.content?.["text/event-stream"] || op["x-corral-websocket"]), `${stream.pattern}: events or a WebSocket`);
  }
});

test("openapi - the description and the docs need no identity nor token; every other request still does", async (t) => {
  const { baseUrl } = t.context.sys;
  const description = await loadApiDescription(baseUrl);
  for (const path of ["/openapi.json", "/docs", "/docs/init.js", "/docs/swagger-ui.css", "/docs/swagger-ui-bundle.js"]) {
    t.is((await api(baseUrl, "GET", path)).status, 200, `GET ${path}`);
  }
  const head = await api(baseUrl, "HEAD", "/docs");
  t.is(head.status, 200);
  t.is(head.text, "", "HEAD: no body");

  const unknownFile = await api(baseUrl, "GET", "/docs/..%2Ftenants");
  t.is(unknownFile.status, 404);
  t.deepEqual(description.answerProblems("GET", "/docs/:file", unknownFile), [], "a 404 the document lists, with the error body");

  const origin = new URL(baseUrl).origin;
  const denied: Array<[method: string, url: string, route: string | undefined]> = [
    ["GET", `${baseUrl}/status`, "/status"],
    ["GET", `${origin}/status`, "/status"],
    ["GET", `${baseUrl}/tenants`, "/tenants"],
    ["GET", `${baseUrl}/tenants?page=/v2/docs`, "/tenants"],
    ["POST", `${baseUrl}/openapi.json`, undefined],
    ["DELETE", `${baseUrl}/docs/init.js`, undefined],
    ["GET", `${baseUrl}/openapi.json/tenants`, undefined],
    ["GET", `${baseUrl}/docs/init.js/tenants`, undefined],
    ["GET", `${origin}/openapi.json`, undefined],
  ];
  for (const [method, url, route] of denied) {
    const res = await fetch(url, { method, headers: { "Service-UserID": SUPERADMIN.user!, "Service-TenantID": SUPERADMIN.tenant! } });
    const text = await res.text();
    t.is(res.status, 401, `${method} ${url} without a token`);
    t.regex(res.headers.get("www-authenticate") ?? "", /^Bearer/, `${method} ${url}: a Bearer challenge`);
    if (route) t.deepEqual(description.answerProblems(method, route, { status: res.status, headers: res.headers, body: JSON.parse(text), text }), []);
  }
});

test("openapi - /docs and every file it loads come from this gateway, nothing from another host", async (t) => {
  const { baseUrl } = t.context.sys;
  const page = await api(baseUrl, "GET", "/docs");
  t.is(page.headers.get("content-type"), "text/html; charset=utf-8");
  t.regex(page.headers.get("content-security-policy") ?? "", /default-src 'self'/, "the browser may load from this gateway only");

  const tags = [...page.text.matchAll(/<(script|link)\b[^>]*>/g)].map((m) => m[0]);
  t.true(tags.length >= 3, "the page has its scripts and style sheet");
  t.deepEqual(tags.filter((tag) => /(https?:)?\/\//i.test(tag)), [], "no script or link names another host");
  const urls = tags.map((tag) => /\b(?:src|href)="([^"]+)"/.exec(tag)?.[1]);
  t.false(urls.includes(undefined), "every tag loads a file");

  const origin = new URL(baseUrl).origin;
  for (const url of urls as string[]) {
    t.true(url.startsWith("/v2/docs/"), `${url} is served under /v2/docs`);
    const res = await fetch(origin + url);
    const body = await res.text();
    t.is(res.status, 200, url);
    t.regex(res.headers.get("content-type") ?? "", url.endsWith(".css") ? /^text\/css/ : /^text\/javascript/, url);
    t.true(body.length > 0, `${url} has content`);
    if (url.endsWith("/init.js")) {
      t.false(/https?:\/\//.test(body.replace(/^\s*\/\/.*$/gm, "")), "our script names no URL");
      t.regex(body, /validatorUrl: null/, "no validator badge (it would load from validator.swagger.io)");
    }
  }
  t.regex(page.text, /data-openapi="\/v2\/openapi.json"/, "the page renders this gateway's description");
});
