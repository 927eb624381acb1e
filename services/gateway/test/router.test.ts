import test from "ava";
import { endpoints } from "@corral/contracts";
import { apiRoutes, createRouter, pathSegments, type RoutePattern } from "@corral/gateway/testing";

const routes: Array<RoutePattern & { subject: string }> = [
  { method: "GET", pattern: "/clusters/:id/services", subject: "a" },
  { method: "POST", pattern: "/clusters/:id/services/start", subject: "b" },
  { method: "POST", pattern: "/clusters/:id/services/:service/start", subject: "c" },
  { method: "POST", pattern: "/clusters/:id/services/:service", subject: "d" },
];
const route = createRouter(routes);

test("router - literal segments win over parameters", (t) => {
  const m = route("POST", "/clusters/7/services/start");
  t.is(m.kind, "found");
  if (m.kind === "found") t.is(m.route.subject, "b");
});

test("router - parameters are percent-decoded", (t) => {
  const m = route("POST", "/clusters/7/services/my%2Esvc/start");
  t.like(m, { kind: "found", params: { id: "7", service: "my.svc" } });
});

test("router - a known path with another method is 405 with the allowed methods", (t) => {
  t.deepEqual(route("DELETE", "/clusters/7/services"), { kind: "method_not_allowed", allowed: ["GET"] });
});

test("router - unknown paths are not found", (t) => {
  t.deepEqual(route("GET", "/nope"), { kind: "not_found" });
  t.deepEqual(route("GET", "/clusters/7/services/x/y/z"), { kind: "not_found" });
});

test("router - trailing and duplicate slashes are ignored", (t) => {
  t.deepEqual(pathSegments("//clusters///7/"), ["clusters", "7"]);
  t.is(route("GET", "/clusters//7/services/").kind, "found");
});

test("router - broken percent-encoding is a bad path", (t) => {
  t.is(route("POST", "/clusters/%E0%A4%A/services/start").kind, "bad_path");
});

test("routes - every API route has a subject or is public, and no two routes collide", (t) => {
  const seen = new Set<string>();
  for (const r of apiRoutes()) {
    t.true(r.access === "public" || typeof endpoints[r.endpoint].subject === "string", `${r.method} ${r.pattern}`);
    const key = `${r.method} ${r.pattern.replace(/:[^/]+/g, ":")}`;
    t.false(seen.has(key), key);
    seen.add(key);
  }
});
