import type { NatsConnection } from "@nats-io/transport-node";
import {
  PROVISIONER_HEARTBEAT_MS,
  buckets,
  encode,
  kvKey,
  pluginTypeKey,
  type PluginSpec,
  type ProvisionerRecord,
} from "@corral/contracts";
import { openBucket } from "@corral/shared";
import { fixtureAutomatorSpecs, fixtureProviderSpecs } from "./fixture-catalog.js";

/** Writes plugin types into the registry as provisioners would announce them. */
export async function registerPluginTypes(
  nc: NatsConnection,
  kind: "automatortypes" | "providertypes",
  specs: PluginSpec[],
): Promise<void> {
  const kv = await openBucket(nc, buckets.pluginTypes);
  for (const spec of specs) await kv.put(pluginTypeKey(kind, spec.name), encode(spec));
}

/**
 * What a test says about a provisioner: the id, and any record fields it cares about. Fields of the read model
 * (`capacityFree`, `assignments`) may be passed and are not written: tenancy derives them.
 */
export type ProvisionerInput = Pick<ProvisionerRecord, "id"> & Partial<Omit<ProvisionerRecord, "id">>;

export interface RegisterOptions {
  /**
   * Keep the record alive by rewriting it with a fresh `lastHeartbeat` every PROVISIONER_HEARTBEAT_MS, as a
   * running provisioner does, until `stop()`, until the same id registers again on this connection, or until the
   * connection closes. Off, the record is written once and dies after PROVISIONER_DEAD_AFTER_MS.
   * @default true
   */
  heartbeat?: boolean;
  /** Clock for `lastHeartbeat` and `registeredAt`. @default Date.now */
  now?: () => number;
}

export interface RegisteredProvisioner {
  /** The record as first written. */
  record: ProvisionerRecord;
  /** Stops heartbeating (the record stays and dies of age). Idempotent. */
  stop(): void;
}

interface Heartbeat {
  registered: RegisteredProvisioner;
  /** The write in flight, awaited before the same id registers again so an old state never lands last. */
  inflight: Promise<unknown>;
}
const heartbeats = new WeakMap<NatsConnection, Map<string, Heartbeat>>();

/** The record a provisioner with these fields would write; defaults for what the input leaves out. */
export function provisionerRecord(p: ProvisionerInput, now: number = Date.now()): ProvisionerRecord {
  return {
    id: p.id,
    host: p.host ?? `${p.id}.example.com`,
    port: p.port ?? 55056,
    capacityTotal: p.capacityTotal ?? 10,
    usage: p.usage ?? {},
    lastHeartbeat: p.lastHeartbeat ?? now,
    registeredAt: p.registeredAt ?? now,
    plugins: p.plugins ?? { providertypes: [], automatortypes: [] },
  };
}

/** Writes a provisioner record as a registering provisioner would, and by default keeps heartbeating it. */
export async function registerProvisioner(
  nc: NatsConnection,
  p: ProvisionerInput,
  options: RegisterOptions = {},
): Promise<RegisteredProvisioner> {
  const now = options.now ?? Date.now;
  const kv = await openBucket(nc, buckets.provisioners);
  let byId = heartbeats.get(nc);
  if (!byId) heartbeats.set(nc, (byId = new Map()));
  const previous = byId.get(p.id);
  previous?.registered.stop();
  await previous?.inflight;
  const record = provisionerRecord(p, now());
  await kv.put(kvKey(p.id), encode(record));

  let timer: NodeJS.Timeout | undefined;
  const registered: RegisteredProvisioner = {
    record,
    stop() {
      clearInterval(timer);
      timer = undefined;
      if (byId.get(p.id) === heartbeat) byId.delete(p.id);
    },
  };
  const heartbeat: Heartbeat = { registered, inflight: Promise.resolve() };
  if (options.heartbeat ?? true) {
    timer = setInterval(() => {
      if (nc.isClosed()) return registered.stop();
      heartbeat.inflight = kv
        .put(kvKey(p.id), encode({ ...record, lastHeartbeat: now() }))
        .catch(() => registered.stop());
    }, PROVISIONER_HEARTBEAT_MS);
    timer.unref();
    byId.set(p.id, heartbeat);
  }
  return registered;
}

/**
 * Registers the test catalog's provider types (aws, digitalocean, gce, openstack) and automator types (chef-solo,
 * shell) in the registry.
 */
export async function registerFixturePluginTypes(nc: NatsConnection): Promise<void> {
  await registerPluginTypes(nc, "automatortypes", fixtureAutomatorSpecs());
  await registerPluginTypes(nc, "providertypes", fixtureProviderSpecs());
}
