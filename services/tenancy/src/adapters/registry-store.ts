import type { NatsConnection } from "@nats-io/transport-node";
import {
  ASSIGNMENT_KEY,
  buckets,
  kvKey,
  type PluginKind,
  type PluginSpec,
  type ProvisionerRecord,
  type WorkerAssignment,
} from "@corral/contracts";
import {
  listValues,
  openBucket,
  openPluginTypeReader,
  readValue,
  type KV,
  type PluginTypeReader,
} from "@corral/shared";

/**
 * Read side of what provisioners announce (their records and the plugin types they carry) and of the worker
 * assignment the balancer writes. Reads go to KV directly, so a record written a moment ago is seen.
 */
export interface RegistryStore {
  /** The record a provisioner wrote, live or not. */
  provisioner(id: string): Promise<ProvisionerRecord | undefined>;
  /** Every provisioner record, live or not, in no particular order. */
  provisioners(): Promise<ProvisionerRecord[]>;
  /** The worker assignment in force; `{}` before the balancer first wrote one. */
  assignment(): Promise<WorkerAssignment>;
  /** Every plugin type of one kind by name. */
  pluginTypes(kind: PluginKind): Promise<Map<string, PluginSpec>>;
}

class KvRegistryStore implements RegistryStore {
  constructor(
    private readonly provisionersKv: KV,
    private readonly pluginTypesReader: PluginTypeReader,
    private readonly assignmentsKv: KV,
  ) {}
  async provisioner(id: string) {
    return (await readValue<ProvisionerRecord>(this.provisionersKv, kvKey(id)))?.value;
  }
  async provisioners() {
    return (await listValues<ProvisionerRecord>(this.provisionersKv)).map((e) => e.value);
  }
  async assignment() {
    const value = (await readValue<WorkerAssignment>(this.assignmentsKv, ASSIGNMENT_KEY))?.value;
    return typeof value === "object" && value !== null ? value : {};
  }
  async pluginTypes(kind: PluginKind) {
    return new Map((await this.pluginTypesReader.list(kind)).map((spec) => [spec.name, spec]));
  }
}

export async function openRegistryStore(nc: NatsConnection): Promise<RegistryStore> {
  const [p, t, a] = await Promise.all([
    openBucket(nc, buckets.provisioners),
    openPluginTypeReader(nc),
    openBucket(nc, buckets.assignments),
  ]);
  return new KvRegistryStore(p, t, a);
}
