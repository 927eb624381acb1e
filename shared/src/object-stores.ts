import type { NatsConnection } from "@nats-io/transport-node";
import { Objm, type ObjectStore } from "@nats-io/obj";
import { storeReplicas } from "./replicas.js";

export type { ObjectStore } from "@nats-io/obj";

/** Opens an object store, creating it when absent (idempotent across instances) with the connection's replica count. */
export function openObjectStore(nc: NatsConnection, name: string): Promise<ObjectStore> {
  return new Objm(nc).create(name, { replicas: storeReplicas(nc) });
}
