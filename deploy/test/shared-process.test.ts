/** Which instances the launcher runs together (launcher.sharedProcess) and what the shared process accepts. */
import test from "ava";
import { launchUnits, parseSharedMembers, parseSharedServices, sharedProcessName } from "../src/shared-process.js";
import { instancesOf } from "../src/instances.js";
import type { ServiceEntry } from "../src/service-discovery.js";

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
