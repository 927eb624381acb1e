import type { NatsConnection } from "@nats-io/transport-node";
import { openPluginTypeReader, serveEndpoints, type Logger, type MetricsRegistry } from "@corral/shared";
import { openActiveSetStore } from "./adapters/active-set-store.js";
import { openBlobStore } from "./adapters/blob-store.js";
import { openResourceStore } from "./adapters/resource-store.js";
import { resourceHandlers } from "./handlers/resources.js";
import { syncHandlers } from "./handlers/sync.js";
import { typeHandlers } from "./handlers/types.js";
import { startTenantJanitor } from "./tenant-janitor.js";

export interface PluginsServiceDeps {
  nc: NatsConnection;
  log: Logger;
  /** @default Date.now */
  now?: () => number;
  /** The process's Prometheus metrics (request durations per endpoint). @default none */
  metrics?: MetricsRegistry;
}

export interface PluginsService {
  /** Stops taking requests and waits for running ones. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Starts the plugins service: plugin specifications (announced by provisioners), per-tenant plugin resources
 * (bytes in the Object Store `corral_plugin_resources`, metadata in KV `corral_plugin_meta`), their versions and
 * statuses, and sync, which publishes each tenant's live set (KV `corral_plugin_active`) for provisioners.
 */
export async function startPluginsService(deps: PluginsServiceDeps): Promise<PluginsService> {
  const { nc, log } = deps;
  const now = deps.now ?? Date.now;
  const [types, resources, blobs, activeSets] = await Promise.all([
    openPluginTypeReader(nc),
    openResourceStore(nc),
    openBlobStore(nc),
    openActiveSetStore(nc),
  ]);
  const served = serveEndpoints({
    nc,
    service: "plugins",
    log,
    metrics: deps.metrics,
    handlers: {
      ...typeHandlers(types),
      ...resourceHandlers({ types, resources, blobs, log, now }),
      ...syncHandlers({ types, resources, blobs, activeSets, log, now }),
    },
  });
  const janitor = await startTenantJanitor({ nc, resources, log });
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      janitor.stop();
      stopping ??= served.stop();
      return stopping;
    },
  };
}
