/**
 * The console in headless Chromium against a real Corral (sim provider, child processes as in bench/clusters):
 * time from page load to the cluster list drawn with 1,000 clusters, and to the node table of a 10,000-node
 * cluster, each a fresh page load (median and worst of several rounds); the page's JS heap then; and how long
 * the node table takes to redraw after a jump to its middle. Targets: under 1 s and under 2 s.
 * Writes bench/results/console.json.
 *
 * Run: node --import=tsx bench/console/load.ts
 * Env: BENCH_CLUSTERS (1000), BENCH_NODES (10000), BENCH_ROUNDS (5)
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import type { Browser, Page } from "puppeteer-core";
import { mapLimit } from "@corral/shared";
import { api, type Caller } from "../../test/helpers/api.js";
import { consoleOrigin, launchBrowser, openSignedIn } from "../../test/helpers/browser.js";
import { createClusterCatalog } from "../../test/helpers/cluster-fixture.js";
import { machine, round, startBenchSystem, trackClusters, type BenchSystem } from "../clusters/lib.js";
import { envNumber as env } from "../env.js";

const CLUSTERS = env("BENCH_CLUSTERS", 1000);
const NODES = env("BENCH_NODES", 10_000);
const ROUNDS = env("BENCH_ROUNDS", 5);
const TARGETS = { listMs: 1000, nodeTableMs: 2000 };

async function createClusters(sys: BenchSystem, admin: Caller, template: string, count: number, numMachines: number, prefix: string): Promise<string[]> {
  return mapLimit(
    Array.from({ length: count }, (_, i) => i),
    16,
    async (i) => {
      const res = await api(sys.baseUrl, "POST", "/clusters", { ...admin, body: { name: `${prefix}-${String(i).padStart(4, "0")}`, clusterTemplate: template, numMachines } });
      if (res.status !== 200) throw new Error(`create ${prefix}-${i}: HTTP ${res.status} ${res.text}`);
      return String(res.body.id);
    },
  );
}

/**
 * Loads `hash` in a fresh document and returns ms from navigation start until `rowsSelector` has rows and the
 * table's row count says `expectedRows`, with the JS heap then.
 */
async function timeLoad(page: Page, origin: string, hash: string, table: string, expectedRows: number): Promise<{ ms: number; heapMb: number }> {
  await page.goto("about:blank");
  await page.goto(`${origin}/ui/#${hash}`);
  const handle = await page.waitForFunction(
    (label, rows) => {
      const wrap = document.querySelector(`.vtable[aria-label="${label}"]`)?.closest(".vtable-wrap");
      const counted = wrap?.querySelector(".vtable-count")?.textContent === `${rows} rows`;
      return counted && wrap?.querySelector("tbody tr[data-key]") ? performance.now() : false;
    },
    { polling: "raf", timeout: 60_000 },
    table,
    expectedRows,
  );
  const ms = (await handle.jsonValue()) as number;
  const metrics = await page.metrics();
  return { ms: round(ms, 1), heapMb: round((metrics.JSHeapUsedSize ?? 0) / 1048576, 1) };
}

/** ms until the node table shows a row near its middle after its scroller jumps there. */
async function timeScrollJump(page: Page): Promise<number> {
  const ms = await page.evaluate(async () => {
    const scroller = document.querySelector(".nodes-tab .vtable-scroll") as HTMLElement;
    const start = performance.now();
    scroller.scrollTop = scroller.scrollHeight / 2;
    for (;;) {
      await new Promise((r) => requestAnimationFrame(r));
      const index = Number(scroller.querySelector("tbody tr[data-key]")?.getAttribute("aria-rowindex") ?? 0);
      if (index > 1000) return performance.now() - start;
      if (performance.now() - start > 10_000) return -1;
    }
  });
  return round(ms, 1);
}

const summary = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return { medianMs: sorted[Math.floor(sorted.length / 2)] ?? 0, maxMs: sorted[sorted.length - 1] ?? 0, samplesMs: samples };
};

async function main() {
  const sys = await startBenchSystem({ sync: "lazy", clustersProcesses: 1, provisioners: 2, provisionerCapacity: 32, requestTimeoutMs: 300_000 });
  let browser: Browser | undefined;
  try {
    const catalog = await createClusterCatalog(sys.baseUrl, { tenant: "console", workers: 64, services: [{ name: "base", actions: {} }] });
    await sys.waitForWorkers(catalog.tenant, 64);
    const tracker = await trackClusters(sys.nc);
    let t0 = Date.now();
    const small = await createClusters(sys, catalog.admin, catalog.template, CLUSTERS - 1, 1, "c");
    const [large] = await createClusters(sys, catalog.admin, catalog.template, 1, NODES, "large");
    if (!large) throw new Error("the large cluster was not created");
    await tracker.waitAll([...small, large], "active", 600_000);
    const setupSeconds = round((Date.now() - t0) / 1000, 1);
    tracker.stop();
    console.log(`${CLUSTERS} clusters (one of ${NODES} nodes) active in ${setupSeconds} s`);

    browser = await launchBrowser();
    const page = await browser.newPage();
    const origin = consoleOrigin(sys.baseUrl);
    await openSignedIn(page, sys.baseUrl, catalog.admin);
    const loadBefore = loadavg().map((x) => round(x, 2));
    const list: Array<{ ms: number; heapMb: number }> = [];
    const nodes: Array<{ ms: number; heapMb: number }> = [];
    const jumps: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      list.push(await timeLoad(page, origin, "/clusters", "Clusters", CLUSTERS));
      nodes.push(await timeLoad(page, origin, `/clusters/${encodeURIComponent(large)}`, "Nodes", NODES));
      jumps.push(await timeScrollJump(page));
      console.log(`round ${i + 1}: list ${list[i]?.ms} ms, node table ${nodes[i]?.ms} ms, scroll jump ${jumps[i]} ms`);
    }
    // What the server alone takes for the page's biggest read, for comparison.
    const apiGetMs: number[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const t = performance.now();
      const res = await api(sys.baseUrl, "GET", `/clusters/${encodeURIComponent(large)}`, catalog.admin);
      if (res.status !== 200) throw new Error(`GET the large cluster: HTTP ${res.status}`);
      apiGetMs.push(round(performance.now() - t, 1));
    }
    const detailsBytes = (await api(sys.baseUrl, "GET", `/clusters/${encodeURIComponent(large)}`, catalog.admin)).text.length;
    const listSummary = summary(list.map((x) => x.ms));
    const nodeSummary = summary(nodes.map((x) => x.ms));
    const result = {
      date: new Date().toISOString(),
      machine: machine(),
      browser: await browser.version(),
      loadAverageBefore: loadBefore,
      configuration: { clusters: CLUSTERS, largeClusterNodes: NODES, rounds: ROUNDS, setupSeconds, provider: "sim, no delays; clusters created through the REST API" },
      targets: { listDrawnMs: TARGETS.listMs, nodeTableDrawnMs: TARGETS.nodeTableMs },
      clusterList: { ...listSummary, jsHeapMb: Math.max(...list.map((x) => x.heapMb)), met: listSummary.maxMs < TARGETS.listMs },
      nodeTable: { ...nodeSummary, jsHeapMb: Math.max(...nodes.map((x) => x.heapMb)), met: nodeSummary.maxMs < TARGETS.nodeTableMs },
      nodeTableScrollJump: summary(jumps),
      largeClusterRead: { ...summary(apiGetMs), bytes: detailsBytes, what: "GET /v2/clusters/{id} of the large cluster from Node (fetch, JSON parse included), no browser" },
      measured: "ms from navigation start (performance.now()) to the first frame with the table's rows drawn and its count showing every row; a fresh document per round (about:blank in between)",
    };
    mkdirSync(new URL("../results/", import.meta.url), { recursive: true });
    writeFileSync(new URL("../results/console.json", import.meta.url), JSON.stringify(result, null, 2) + "\n");
    console.log(JSON.stringify(result, null, 2));
  } finally {
    await browser?.close();
    await sys.stop();
  }
}

await main();
