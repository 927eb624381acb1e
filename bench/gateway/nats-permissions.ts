/**
 * What nats-server's permission checks cost per request/reply, A/B on one server: the gateway's user requests
 * `corral.tenancy.catalog.providers.get` (64 in flight, replies on its muxed inbox) and tenancy's user answers each, as on
 * the REST read path. Modes:
 * - `open`: no permissions (the floor's admin user);
 * - `allowResponses`: the users' real permissions (deploy/src/bus-permissions.ts), tenancy answering through
 *   `allow_responses`;
 * - `inboxAllow`: the same, but tenancy may publish to its callers' inbox prefixes instead of `allow_responses`.
 * Reports nats-server CPU microseconds per request of each mode. Writes bench/results/nats-permissions.json.
 *
 * Run: node --import=tsx bench/gateway/nats-permissions.ts   Env: BENCH_REQUESTS (200000 per mode), BENCH_ROUNDS (2)
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { inboxPrefixOf } from "@corral/contracts";
import { generateBusCredentials, servicePermissions, startNats, type NatsPermissions, type NatsUser } from "@corral/deploy";
import { connect } from "@nats-io/transport-node";
import { cpuSeconds } from "./process-cpu.js";
import { median } from "../stats.js";

const REQUESTS = Number(process.env["BENCH_REQUESTS"] ?? 200_000);
const ROUNDS = Number(process.env["BENCH_ROUNDS"] ?? 2);
const IN_FLIGHT = 64;
const SUBJECT = "corral.tenancy.catalog.providers.get";
const REPLY = new Uint8Array(300).fill(7);

type Mode = "open" | "allowResponses" | "inboxAllow";

function usersFor(mode: Mode): NatsUser[] | undefined {
  if (mode === "open") return undefined;
  const creds = generateBusCredentials();
  const real = servicePermissions("tenancy");
  const { allow_responses: _answers, ...withoutResponses } = real;
  const tenancy: NatsPermissions =
    mode === "allowResponses"
      ? real
      : { ...withoutResponses, publish: { ...real.publish, allow: [...(real.publish.allow ?? []), `${inboxPrefixOf("gateway")}.>`] } };
  return [
    { ...creds.services.gateway, permissions: servicePermissions("gateway") },
    { ...creds.services.tenancy, permissions: tenancy },
  ];
}

async function run(mode: Mode): Promise<number> {
  const users = usersFor(mode);
  const nats = await startNats({ ...(users ? { users } : {}) });
  const login = (i: number) => (users ? { user: users[i]!.user, pass: users[i]!.password } : {});
  try {
    const responder = await connect({ servers: nats.url, ...login(1) });
    responder.subscribe(SUBJECT, { callback: (_e, m) => void m.respond(REPLY) });
    await responder.flush();
    const requester = await connect({ servers: nats.url, inboxPrefix: inboxPrefixOf("gateway"), ...login(0) });
    const pids = { "nats-server": nats.pid };
    let sent = 0;
    const loop = async () => {
      while (sent < REQUESTS) {
        sent++;
        await requester.request(SUBJECT, new Uint8Array(40), { timeout: 5000 });
      }
    };
    const before = cpuSeconds(pids)["nats-server"] ?? 0;
    await Promise.all(Array.from({ length: IN_FLIGHT }, loop));
    const after = cpuSeconds(pids)["nats-server"] ?? 0;
    await requester.close();
    await responder.close();
    return Math.round(((after - before) * 1e6) / REQUESTS * 10) / 10;
  } finally {
    await nats.stop();
  }
}

const modes: Mode[] = ["open", "allowResponses", "inboxAllow"];
const runs: Record<Mode, number[]> = { open: [], allowResponses: [], inboxAllow: [] };
for (let r = 0; r < ROUNDS; r++) {
  for (const mode of r % 2 ? [...modes].reverse() : modes) {
    runs[mode].push(await run(mode));
    console.log(mode, runs[mode].at(-1), "µs nats-server CPU/request");
  }
}
const result = {
  date: new Date().toISOString(),
  requests: REQUESTS,
  inFlight: IN_FLIGHT,
  natsServerCpuMicrosPerRequest: Object.fromEntries(modes.map((m) => [m, median(runs[m])])),
  runs,
};
writeFileSync(join(import.meta.dirname, "../results/nats-permissions.json"), `${JSON.stringify(result, null, 2)}\n`);
console.log(JSON.stringify(result.natsServerCpuMicrosPerRequest));
