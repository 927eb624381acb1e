import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "@corral/shared";
import type { RemoteAccess } from "../../ssh/remote-node.js";
import type { ProviderPlugin } from "../types.js";
import { HostAllocations } from "./allocations.js";
import { confirmHost } from "./confirm.js";
import { createHost } from "./create.js";
import { deleteHost } from "./delete.js";
import { hostpoolHealth } from "./health.js";
import { HOSTPOOL_SPEC } from "./spec.js";

export { HOSTPOOL_SPEC } from "./spec.js";

export interface HostpoolProviderOptions {
  access: RemoteAccess;
  nc: NatsConnection;
  log: Logger;
  /** How long CONFIRM waits for SSH to answer and accept the login, ms. @default 60000 */
  confirmTimeoutMs?: number;
  /** Pause between CONFIRM's attempts, ms. @default 1000 */
  confirmRetryMs?: number;
  /** @default Date.now */
  now?: () => number;
  /** How long a health check waits for one host's SSH handshake, ms. @default 5000 */
  healthProbeTimeoutMs?: number;
}

/**
 * The `hostpool` provider: machines that already exist, listed in the provider's `hosts` field. CREATE allocates
 * a free host (bucket `corral_hostpool`), CONFIRM waits for its SSH and pins its host key, DELETE cleans it and
 * frees it (or quarantines it when cleaning fails).
 */
export function createHostpoolProvider(options: HostpoolProviderOptions): ProviderPlugin {
  const allocations = new HostAllocations(options.nc);
  const { pool } = options.access;
  const now = options.now ?? Date.now;
  const confirm = { timeoutMs: options.confirmTimeoutMs ?? 60_000, retryMs: options.confirmRetryMs ?? 1_000 };
  return {
    kind: "providertypes",
    spec: HOSTPOOL_SPEC,
    create: (ctx) => createHost(allocations, ctx, now),
    confirm: (ctx) => confirmHost(pool, ctx, confirm),
    delete: (ctx) => deleteHost(allocations, pool, ctx, now),
    health: hostpoolHealth({ probeTimeoutMs: options.healthProbeTimeoutMs ?? 5_000, concurrency: 16 }),
    close: () => pool.close(),
  };
}
