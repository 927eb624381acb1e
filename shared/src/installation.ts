import { randomUUID } from "node:crypto";
import type { NatsConnection } from "@nats-io/transport-node";
import { createValue, openBucket, readValue } from "./kv.js";
import { buckets } from "@corral/contracts";

const KEY = "id";

/**
 * This installation's id: made once (KV create, so every process of the installation agrees) and kept in
 * `corral_installation`. Things Corral leaves outside its own state, such as Docker containers, carry it, so two
 * installations sharing a Docker host never take each other's containers for orphans.
 */
export async function installationId(nc: NatsConnection): Promise<string> {
  const kv = await openBucket(nc, buckets.installation);
  const existing = await readValue<string>(kv, KEY);
  if (existing) return existing.value;
  const made = randomUUID();
  if ((await createValue(kv, KEY, made)) !== undefined) return made;
  const winner = await readValue<string>(kv, KEY);
  if (!winner) throw new Error("the installation id vanished while it was created");
  return winner.value;
}
