/**
 * The metrics helpers of shared: pre-resolved series rendered by prom-client's registry in the text format, the
 * metrics HTTP server, and served NATS requests counted per endpoint and logged under the caller's request id.
 */
import test from "ava";
import { startNats } from "../../test/helpers/servers.js";
import {
  LabeledCounter,
  LabeledHistogram,
  call,
  connectNats,
  createLogger,
  createMetricsRegistry,
  requestIdOf,
  sampledGauge,
  seriesByStatus,
  serve,
  silentLogger,
  startMetricsServer,
} from "@corral/shared";
import { NotFoundError } from "@corral/contracts";
import { parseExposition, samplesOf, scrape, valueOf } from "../../test/helpers/prometheus-text.js";

function spendCpu(milliseconds: number): void {
  const until = performance.now() + milliseconds;
  while (performance.now() < until);
}

test("metrics - labeled series render as counters and cumulative histograms; a gauge is sampled at each scrape", async (t) => {
  const registry = createMetricsRegistry();
  const counter = new LabeledCounter(registry, { name: "t_things_total", help: "things", labelNames: ["kind"] });
  const histogram = new LabeledHistogram(registry, { name: "t_wait_seconds", help: "waits", labelNames: ["route", "status"], buckets: [0.1, 1] });
  const a = counter.series({ kind: "a" });
  t.is(counter.series({ kind: "a" }), a, "the same labels answer the same series");
  a.inc();
  a.inc(2);
  counter.series({ kind: 'q"uote\\' }).inc();
  const byStatus = seriesByStatus(histogram, { route: "/x/:id" });
  byStatus(200).observe(0.05);
  byStatus(200).observe(0.5);
  byStatus(200).observe(5);
  byStatus(404).observe(0.1);
  let depth = 3;
  sampledGauge(registry, { name: "t_depth", help: "depth", labelNames: ["tenant"], sample: () => [[{ tenant: "acme" }, depth]] });

  spendCpu(20); // the process CPU counter counts from the registry's creation; a fast machine could scrape at 0
  const first = parseExposition(await registry.metrics());
  t.is(first.types.get("t_things_total"), "counter");
  t.is(first.types.get("t_wait_seconds"), "histogram");
  t.is(valueOf(first, "t_things_total", { kind: "a" }), 3);
  t.is(valueOf(first, "t_things_total", { kind: 'q"uote\\' }), 1, "label values are escaped and read back");
  const buckets = samplesOf(first, "t_wait_seconds_bucket", { route: "/x/:id", status: "200" }).map((s) => [s.labels["le"], s.value]);
  t.deepEqual(buckets, [["0.1", 1], ["1", 2], ["+Inf", 3]]);
  t.is(valueOf(first, "t_wait_seconds_count", { status: "200" }), 3);
  t.is(valueOf(first, "t_wait_seconds_sum", { status: "200" }), 5.55);
  t.deepEqual(samplesOf(first, "t_wait_seconds_bucket", { status: "404", le: "0.1" }).map((s) => s.value), [1], "a bound is inclusive");
  t.is(valueOf(first, "t_depth", { tenant: "acme" }), 3);
  t.true(valueOf(first, "process_cpu_user_seconds_total") > 0, "default process metrics");
  t.true(first.types.has("nodejs_eventloop_lag_seconds"));
  depth = 7;
  t.is(valueOf(parseExposition(await registry.metrics()), "t_depth", { tenant: "acme" }), 7);
});

test("metrics - without a registry (metrics off) series record nothing and cost a shared no-op", (t) => {
  const histogram = new LabeledHistogram(undefined, { name: "t_off_seconds", help: "off", labelNames: ["a"], buckets: [1] });
  t.is(histogram.series({ a: "x" }), histogram.series({ a: "y" }));
  t.notThrows(() => histogram.series({ a: "x" }).observe(1));
});

test("metrics - the server answers GET /metrics in the text format, JSON 404 and 405 otherwise", async (t) => {
  const registry = createMetricsRegistry();
  new LabeledCounter(registry, { name: "t_served_total", help: "served", labelNames: ["x"] }).series({ x: "1" }).inc();
  const server = await startMetricsServer({ registry, port: 0, log: silentLogger });
  t.teardown(() => server.stop());
  t.regex(server.url, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
  t.is(valueOf(await scrape(server.url), "t_served_total", { x: "1" }), 1);
  const other = await fetch(server.url.replace("/metrics", "/other"));
  t.is(other.status, 404);
  t.like(await other.json(), { status: 404, error: "not_found" });
  const post = await fetch(server.url, { method: "POST" });
  t.is(post.status, 405);
  t.is(post.headers.get("allow"), "GET, HEAD");
  t.like(await post.json(), { status: 405, error: "method_not_allowed" });
});

test("metrics - a second server on a taken port fails to start (the caller decides what then)", async (t) => {
  const registry = createMetricsRegistry();
  const server = await startMetricsServer({ registry, port: 0, log: silentLogger });
  t.teardown(() => server.stop());
  await t.throwsAsync(startMetricsServer({ registry, port: server.port, log: silentLogger }), { message: /EADDRINUSE/ });
});

test("metrics - a request id is the client's when usable, else a new one", (t) => {
  t.is(requestIdOf("abc-123_x.y:z"), "abc-123_x.y:z");
  for (const bad of [undefined, "", "has space", "a".repeat(129), "new\nline", '{"json":1}']) {
    t.regex(requestIdOf(bad), /^[0-9a-f-]{36}$/, `replaced: ${JSON.stringify(bad)}`);
  }
});

test("metrics - serve counts each endpoint's requests by status and logs the caller's request id", async (t) => {
  const nats = await startNats({ jetstream: false });
  t.teardown(() => nats.stop());
  const nc = await connectNats({ url: nats.url, name: "metrics-test" });
  t.teardown(() => nc.close());
  const registry = createMetricsRegistry();
  const lines: Array<Record<string, unknown>> = [];
  const log = createLogger({ service: "test" }, { write: (line) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  const served = serve({
    nc,
    queue: "metrics-test",
    log,
    metrics: registry,
    endpointNames: { "t.echo": "test.echo" },
    handlers: {
      "t.echo": (r: { n: number }) => r.n,
      "t.missing": () => {
        throw new NotFoundError("thing", "x");
      },
    },
  });
  t.teardown(() => served.stop());
  t.is(await call(nc, "t.echo", { n: 1 }, { requestId: "req-1" }), 1);
  t.is(await call(nc, "t.echo", { n: 2 }), 2);
  await t.throwsAsync(call(nc, "t.missing", {}, { requestId: "req-2" }));

  const scraped = parseExposition(await registry.metrics());
  t.is(valueOf(scraped, "corral_rpc_request_duration_seconds_count", { endpoint: "test.echo", status: "200" }), 2);
  t.is(valueOf(scraped, "corral_rpc_request_duration_seconds_count", { endpoint: "t.missing", status: "404" }), 1, "no name: the subject");
  const servedLines = lines.filter((l) => l["msg"] === "served");
  t.deepEqual(
    servedLines.map((l) => [l["endpoint"], l["requestId"], l["status"], l["level"]]),
    [
      ["test.echo", "req-1", 200, "info"],
      ["t.missing", "req-2", 404, "info"],
    ],
    "one line per request that carried an id",
  );
  t.true(servedLines.every((l) => typeof l["ms"] === "number" && (l["ms"] as number) >= 0));
});
