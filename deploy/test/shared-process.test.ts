/** Which instances the launcher runs together (launcher.sharedProcess) and what the shared process accepts. */
import { setTimeout as sleep } from "node:timers/promises";
import test from "ava";
import { inboxPrefixOf } from "@corral/contracts";
import { connectNats } from "@corral/shared";
import { freePort } from "../src/ports.js";
import { launchUnits, parseSharedMembers, parseSharedServices, SHARED_PROCESS_ENTRY, SHARED_PROCESS_ENV, sharedProcessName, type SharedMember } from "../src/shared-process.js";
import { instancesOf } from "../src/instances.js";
import type { ServiceEntry } from "../src/service-discovery.js";
import { startServiceProcess } from "../../test/helpers/processes.js";
import { startNats } from "../../test/helpers/servers.js";

const entry = (name: string, definition = true): ServiceEntry => ({
  name,
  entry: `services/${name}/src/index.ts`,
  ...(definition ? { definition: `services/${name}/src/service-process.ts` } : {}),
});
const services = [entry("auth"), entry("gateway"), entry("metrics"), entry("plugins"), entry("webhooks"), entry("provisioner", false)];
const shape = (units: ReturnType<typeof launchUnits>) => units.map((u) => (u.kind === "alone" ? u.instance.name : sharedProcessName(u.instances)));

test("the named services that run once go into one process; the rest run alone", (t) => {
  const units = launchUnits(instancesOf(services, () => 1), ["auth", "metrics", "plugins", "webhooks"]);
  t.deepEqual(shape(units), ["gateway", "provisioner", "auth+metrics+plugins+webhooks"]);
});

test("a named service with several instances runs them alone", (t) => {
  const units = launchUnits(instancesOf(services, (name) => (name === "metrics" ? 2 : 1)), ["auth", "metrics", "plugins"]);
  t.deepEqual(shape(units), ["gateway", "metrics#0", "metrics#1", "webhooks", "provisioner", "auth+plugins"]);
});

test("one service left to share, or none named, runs every instance alone", (t) => {
  t.deepEqual(shape(launchUnits(instancesOf(services, (name) => (name === "auth" ? 1 : 2)), ["auth", "plugins"])), [
    "auth",
    "gateway#0",
    "gateway#1",
    "metrics#0",
    "metrics#1",
    "plugins#0",
    "plugins#1",
    "webhooks#0",
    "webhooks#1",
    "provisioner#0",
    "provisioner#1",
  ]);
  t.deepEqual(shape(launchUnits(instancesOf(services, () => 1), [])), ["auth", "gateway", "metrics", "plugins", "webhooks", "provisioner"]);
});

test("a service without a definition never shares", (t) => {
  const units = launchUnits(instancesOf([entry("auth"), entry("solver", false), entry("plugins")], () => 1), ["auth", "solver", "plugins"]);
  t.deepEqual(shape(units), ["solver", "auth+plugins"]);
});

test("the setting: names trimmed and deduplicated, empty means none, an unknown name is refused with the list", (t) => {
  const known = ["auth", "metrics", "plugins"];
  t.deepEqual(parseSharedServices(" auth, plugins ,auth", known), ["auth", "plugins"]);
  t.deepEqual(parseSharedServices("", known), []);
  const err = t.throws(() => parseSharedServices("auth,provisioner", known));
  t.is(err?.message, "launcher.sharedProcess names provisioner, which is no service; services: auth, metrics, plugins");
});

test("the shared process refuses members it was not given by the launcher", (t) => {
  t.throws(() => parseSharedMembers(undefined), { message: /started by the launcher/ });
  t.throws(() => parseSharedMembers("[]"), { message: /JSON list of \{service, definition, env\}/ });
  t.throws(() => parseSharedMembers(JSON.stringify([{ service: "auth", definition: "x", env: { A: 1 } }])), { message: /JSON list/ });
  t.deepEqual(parseSharedMembers(JSON.stringify([{ service: "auth", definition: "x", env: { A: "1" } }])), [{ service: "auth", definition: "x", env: { A: "1" } }]);
});

test("the shared process: a member that cannot start is started again while the others serve; SIGTERM exits 0", async (t) => {
  t.timeout(60_000);
  const nats = await startNats({ jetstream: false });
  t.teardown(() => nats.stop());
  const members: SharedMember[] = [
    { service: "solver", definition: "services/solver/src/service-process.ts", env: { CORRAL_NATS_URL: nats.url } },
    // A login module that does not exist: the auth service cannot start.
    { service: "auth", definition: "services/auth/src/service-process.ts", env: { CORRAL_NATS_URL: nats.url } },
  ];
  const lines: string[] = [];
  const shared = await startServiceProcess({
    name: "shared process",
    entry: SHARED_PROCESS_ENTRY,
    env: {
      [SHARED_PROCESS_ENV]: JSON.stringify(members),
      CORRAL_METRICS_ENABLED: "false",
      CORRAL_SECURITY_ENABLED: "true",
      CORRAL_SECURITY_AUTH_SERVER_BIND_PORT: String(await freePort()),
      CORRAL_SECURITY_AUTHENTICATION_HANDLERCLASSNAME: "./no/such/login-module.js",
    },
    readyMsg: "solver service started",
    onLine: (line) => lines.push(line),
  });
  t.teardown(() => shared.stop());
  const retries = () => lines.filter((l) => l.includes("starting the auth service again in")).length;
  const deadline = Date.now() + 20_000;
  while (retries() < 2 && Date.now() < deadline) await sleep(100);
  t.true(retries() >= 2, lines.join("\n"));
  t.true(lines.some((l) => l.includes('"msg":"auth service failed to start"')));
  t.true(lines.some((l) => l.includes("starting the auth service again in 2 s")), "the delay doubles");

  // The solver serves meanwhile, in the same process.
  const nc = await connectNats({ url: nats.url, name: "shared-process-test", inboxPrefix: inboxPrefixOf("clusters") });
  t.teardown(() => nc.close());
  const answer = await nc.request("corral.solver.layout", new Uint8Array(), { timeout: 5_000 });
  t.true(answer.data.length > 0, "the solver answered");
  t.true(shared.isAlive());

  t.deepEqual(await shared.stop(5_000), { code: 0, signal: null });
});
