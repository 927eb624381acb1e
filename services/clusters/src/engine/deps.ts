import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@corral/shared";
import type { ClusterStore } from "../adapters/cluster-store.js";
import type { Counters } from "../adapters/counters.js";
import type { CredentialStore } from "../adapters/credentials-store.js";
import type { NodeStore } from "../adapters/node-store.js";
import type { PlanStore } from "../adapters/plan-store.js";
import type { Publisher } from "../adapters/publisher.js";
import type { TenancyClient } from "../adapters/tenancy-client.js";
import type { UsageStore } from "../adapters/usage-store.js";

/** Everything the engine touches; tests can swap any of it. */
export interface EngineDeps {
  nc: NatsConnection;
  log: Logger;
  now: () => number;
  clusters: ClusterStore;
  nodes: NodeStore;
  plans: PlanStore;
  counters: Counters;
  credentials: CredentialStore;
  usage: UsageStore;
  tenancy: TenancyClient;
  publisher: Publisher;
}
