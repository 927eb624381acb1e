/**
 * A process of its own that sends events to one plan through the core and carries out what the plan decides, as
 * a clusters-service instance would. Started by tests with `node --import=tsx`; configured by the environment:
 * - SEND_NATS_URL, SEND_TENANT, SEND_CLUSTER, SEND_PLAN;
 * - SEND_EVENTS: a JSON array of plan events, each sent on its own, all at once;
 * - SEND_START_AT (optional): epoch ms to wait for before sending (lines several processes up);
 * - SEND_CRASH_ON (optional): an action type (`publishStage`, `planFinished`): the process kills itself with
 *   SIGKILL right after the plan's write that decided it, before its effects.
 * Exits 0 once every send and its effects are done.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { connectNats } from "@corral/shared";
import type { PlanEvent } from "../../src/domain/plan-machine.js";
import { startCore } from "./core.js";

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const crashOn = process.env["SEND_CRASH_ON"];
const nc = await connectNats({ url: env("SEND_NATS_URL"), name: `send-child-${process.pid}` });
const core = await startCore(nc, {
  tenant: { name: env("SEND_TENANT"), workers: 1 },
  afterWrite: (kind, _record, actions) => {
    if (kind === "plan" && actions.some((a) => (a as { type: string }).type === crashOn)) process.kill(process.pid, "SIGKILL");
  },
});
const events = JSON.parse(env("SEND_EVENTS")) as PlanEvent[];
const ref = { clusterId: env("SEND_CLUSTER"), planId: env("SEND_PLAN") };
const startAt = Number(process.env["SEND_START_AT"] ?? 0);
if (startAt > Date.now()) await sleep(startAt - Date.now());
await Promise.all(events.map((e) => core.actors.effects.deliverToPlan(ref, [e])));
core.stop();
await nc.drain();
process.exit(0);
