/**
 * A real loopback nats-server cluster with JetStream for tests (a thin wrapper over `@corral/deploy`'s
 * startNatsCluster): one per test file, stopped in `test.after.always`.
 */
import { startNatsCluster as deployStartNatsCluster } from "@corral/deploy";
import type { NatsClusterHandle, NatsUser } from "@corral/deploy";

export type { NatsClusterHandle };

/** Options for {@link startNatsCluster}. */
export interface TestNatsClusterOptions {
  /** How many nats-servers. @default 3 */
  nodes?: number;
  /** `sync_interval: always`; tests default to lazy fsync (faster, and nothing here survives a power cut). @default false */
  syncAlways?: boolean;
  /** Users clients must log in as (e.g. `natsUsers(credentials)`, as the launcher has them). @default none */
  users?: NatsUser[];
}

/**
 * Starts `nodes` nats-servers routed into one JetStream cluster on 127.0.0.1; `url` lists every node comma
 * separated (connectNats reconnects to another when one dies), `killNode(i)` SIGKILLs one, `restartNode(i)` starts
 * it again on its ports and store, `stop()` ends them all.
 */
export function startNatsCluster(opts: TestNatsClusterOptions = {}): Promise<NatsClusterHandle> {
  return deployStartNatsCluster({ nodes: opts.nodes ?? 3, syncAlways: opts.syncAlways ?? false, users: opts.users });
}
