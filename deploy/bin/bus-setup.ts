// `node --import=tsx deploy/bin/bus-setup.ts`: creates the JetStream streams, buckets and object stores (prepareBus
// in deploy/src/bus-setup.ts; idempotent) on the NATS of `nats.url` (CORRAL_NATS_URL or CORRAL_CONFIG), then exits.
// What the launcher does at every start, for installations without it: systemd's corral-bus-setup.service and
// the compose file's bus-setup. Provisioners may not create streams, so this runs before they start.
import { connectNats, loadConfig } from "@corral/shared";
import { prepareBus } from "../src/bus-setup.js";

const url = loadConfig({ env: process.env }).get("nats.url");
const nc = await connectNats({ url, name: "corral-bus-setup" });
try {
  await prepareBus(nc);
  console.log("[bus-setup] streams, buckets and object stores are in place");
} finally {
  await nc.close();
}
