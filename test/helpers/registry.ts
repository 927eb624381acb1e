import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { buckets, encode, kvKey, openBucket, pluginTypeKey, type PluginSpec, type Provisioner } from "@corral/shared";

/** Writes plugin types into the registry as provisioners would announce them. */
export async function registerPluginTypes(
  nc: NatsConnection,
  kind: "automatortypes" | "providertypes",
  specs: PluginSpec[],
): Promise<void> {
  const kv = await openBucket(nc, buckets.pluginTypes);
  for (const spec of specs) await kv.put(pluginTypeKey(kind, spec.name), encode(spec));
}

/** Writes a provisioner record as a registering provisioner would. */
export async function registerProvisioner(nc: NatsConnection, p: Provisioner): Promise<void> {
  const kv = await openBucket(nc, buckets.provisioners);
  await kv.put(kvKey(p.id), encode(p));
}

/** The Coopr fixture catalog beside the repository (tests only). */
export const FIXTURES = new URL("../../../shared/fixtures/coopr-catalog/", import.meta.url).pathname;

export function readFixtureDir<T = any>(dir: string): T[] {
  const path = join(FIXTURES, dir);
  return readdirSync(path)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(path, f), "utf8")) as T);
}

/** Provider types the fixture's providers name, registered with no parameters. */
export const FIXTURE_PROVIDER_TYPES = ["aws", "google", "joyent", "openstack", "rackspace"];

/** Registers the fixture's provider and automator types (chef-solo, shell) in the registry. */
export async function registerFixturePluginTypes(nc: NatsConnection): Promise<void> {
  const automators = readFixtureDir<PluginSpec>("plugins/automatortypes");
  await registerPluginTypes(nc, "automatortypes", automators);
  const declared = readFixtureDir<PluginSpec>("plugins/providertypes");
  const providers = FIXTURE_PROVIDER_TYPES.map((name) => declared.find((d) => d.name === name) ?? { name });
  await registerPluginTypes(nc, "providertypes", providers);
}
