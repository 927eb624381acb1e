// `node --conditions=corral-compiled deploy/dist/commands/bus-setup.js` (from the sources: `node --import=tsx
// deploy/src/commands/bus-setup.ts`): creates the JetStream streams, buckets and object stores (prepareBus in
// deploy/src/bus-setup.ts; idempotent) on the NATS of `nats.url` (CORRAL_NATS_URL or CORRAL_CONFIG), migrates
// existing ones to `nats.replicas` (printing each change), then exits.
// What the launcher does at every start, for installations without it: systemd's corral-bus-setup.service and
// the compose file's bus-setup. Provisioners may not create streams, so this runs before they start.
import { connectNats, loadConfig } from "@corral/shared";
import { describeReplicaChange, prepareBus } from "../bus-setup.js";

const config = loadConfig({ env: process.env });
const nc = await connectNats({ url: config.get("nats.url"), name: "corral-bus-setup", replicas: config.get("nats.replicas") });
try {
  const auditRetention = { maxAgeDays: config.get("audit.maxAgeDays"), maxBytes: config.get("audit.maxBytes") };
  for (const change of await prepareBus(nc, { auditRetention })) {
    console.log(`[bus-setup] ${describeReplicaChange(change)}`);
  }
  console.log("[bus-setup] streams, buckets and object stores are in place");
} finally {
  await nc.close();
}
