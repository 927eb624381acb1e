import type { NatsConnection } from "@nats-io/transport-node";
import {
  buckets,
  encode,
  kvKey,
  pluginTypeKey,
  type ProvisionerRecord,
} from "@corral/contracts";
import { openBucket, readBytes, type KV, type Logger } from "@corral/shared";
import type { Plugin } from "./plugins/types.js";

export interface RegistrationDeps {
  nc: NatsConnection;
  log: Logger;
  id: string;
  host: string;
  port: number;
  capacity: number;
  plugins: readonly Plugin[];
  usage: () => Record<string, number>;
  now: () => number;
  /** ms between heartbeats. */
  heartbeatMs: number;
}

/** The provisioner's record in the registry: written at start, on every heartbeat, removed on stop. */
export interface Registration {
  /** Registers (record and plugin specs), then heartbeats. Rejects when the first registration fails. */
  start(): Promise<void>;
  /** Writes the record soon (usage changed); coalesced with a running heartbeat. */
  touch(): void;
  /** Stops heartbeating and removes the record. */
  stop(): Promise<void>;
}

/** Every this many heartbeats, the plugin specs are checked and rewritten if someone removed them. */
const SPEC_CHECK_EVERY = 15;

export function createRegistration(deps: RegistrationDeps): Registration {
  const key = kvKey(deps.id);
  let kvs: { provisioners: KV; pluginTypes: KV } | undefined;
  let registeredAt = 0;
  let beats = 0;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;

  const open = async () =>
    (kvs ??= {
      provisioners: await openBucket(deps.nc, buckets.provisioners),
      pluginTypes: await openBucket(deps.nc, buckets.pluginTypes),
    });

  const record = (): ProvisionerRecord => ({
    id: deps.id,
    host: deps.host,
    port: deps.port,
    capacityTotal: deps.capacity,
    usage: deps.usage(),
    lastHeartbeat: deps.now(),
    registeredAt,
    plugins: {
      providertypes: deps.plugins.filter((p) => p.kind === "providertypes").map((p) => p.spec.name),
      automatortypes: deps.plugins.filter((p) => p.kind === "automatortypes").map((p) => p.spec.name),
    },
  });

  const writeSpecs = async (kv: KV, onlyMissing: boolean) => {
    for (const plugin of deps.plugins) {
      const specKey = pluginTypeKey(plugin.kind, plugin.spec.name);
      if (onlyMissing) {
        if (await readBytes(kv, specKey)) continue;
        deps.log.warn("plugin spec missing; writing it again", { plugin: specKey });
      }
      await kv.put(specKey, encode(plugin.spec));
    }
  };

  /** One heartbeat: (re-)registers when the record is gone, else refreshes it. */
  const beat = async (): Promise<void> => {
    const { provisioners, pluginTypes } = await open();
    if (!(await readBytes(provisioners, key))) {
      if (registeredAt) deps.log.warn("provisioner record gone (expired, removed or server state lost); registering again");
      await writeSpecs(pluginTypes, false);
      registeredAt = deps.now();
      await provisioners.put(key, encode(record()));
      deps.log.info("registered", { id: deps.id, capacity: deps.capacity });
      return;
    }
    if (++beats % SPEC_CHECK_EVERY === 0) await writeSpecs(pluginTypes, true);
    await provisioners.put(key, encode(record()));
  };

  const tick = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = beat()
      .catch((err: unknown) => {
        kvs = undefined; // reopen (the buckets may have been lost with the server's state)
        deps.log.warn("heartbeat failed", { err });
      })
      .finally(() => {
        running = undefined;
        if (again) {
          again = false;
          tick();
        }
      });
  };

  return {
    async start() {
      await beat().catch((err: unknown) => {
        kvs = undefined;
        throw err;
      });
      timer = setInterval(tick, deps.heartbeatMs);
    },
    touch: tick,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
      try {
        const { provisioners } = await open();
        await provisioners.delete(key);
        deps.log.info("deregistered", { id: deps.id });
      } catch (err) {
        deps.log.warn("could not remove the provisioner record", { err });
      }
    },
  };
}
