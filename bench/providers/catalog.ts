/**
 * The benchmark's catalog: one provider entity per provider type measured, one hardware and one image type mapped
 * for each, and per provider a template of one service whose `shell` actions do cheap real work on every node
 * (install writes a file, configure writes its config, start starts a `sleep infinity` daemon in its own session
 * with its descriptors closed).
 */

export type ProviderName = "docker" | "ec2" | "lxd";

/** What the catalog maps for one provider: its entity's admin fields, flavor and image fields. */
export interface ProviderMapping {
  name: ProviderName;
  providertype: ProviderName;
  provisioner: Record<string, string>;
  flavor: string;
  image: Record<string, string>;
}

export const SERVICE = "app";
export const SERVICE_DIR = "/opt/corral-bench";
export const templateOf = (provider: ProviderName) => `one-service-${provider}`;
export const providerEntity = (provider: ProviderName) => `bench-${provider}`;

/** A check that passes on a node whose service ran every action (prints "ok"). */
export const SERVICE_CHECK = `test -f ${SERVICE_DIR}/${SERVICE}.installed && test -f ${SERVICE_DIR}/${SERVICE}.conf && kill -0 $(cat ${SERVICE_DIR}/${SERVICE}.pid) && echo ok`;

function service() {
  const shell = (script: string) => ({ type: "shell", fields: { script, timeout_s: "120" } });
  return {
    name: SERVICE,
    description: "benchmark service: a file per step, a daemon",
    provisioner: {
      actions: {
        install: shell(`mkdir -p ${SERVICE_DIR} && echo installed > ${SERVICE_DIR}/${SERVICE}.installed`),
        configure: shell(`echo "service=${SERVICE} host=$(hostname -f)" > ${SERVICE_DIR}/${SERVICE}.conf`),
        start: shell(`setsid sleep infinity </dev/null >/dev/null 2>&1 & echo $! > ${SERVICE_DIR}/${SERVICE}.pid`),
        stop: shell(`kill $(cat ${SERVICE_DIR}/${SERVICE}.pid) 2>/dev/null; rm -f ${SERVICE_DIR}/${SERVICE}.pid; true`),
      },
    },
  };
}

export function benchCatalog(providers: readonly ProviderMapping[]) {
  const mapOf = (f: (p: ProviderMapping) => Record<string, string>) => Object.fromEntries(providers.map((p) => [providerEntity(p.name), f(p)]));
  return {
    providers: providers.map((p) => ({ name: providerEntity(p.name), description: `${p.name} nodes`, providertype: p.providertype, provisioner: p.provisioner })),
    hardwaretypes: [{ name: "small", description: "1 CPU", providermap: mapOf((p) => ({ flavor: p.flavor })) }],
    imagetypes: [{ name: "debian12", description: "Debian 12 node image", providermap: mapOf((p) => p.image) }],
    services: [service()],
    clustertemplates: providers.map((p) => ({
      name: templateOf(p.name),
      description: `one service on every node, provider ${p.name}`,
      compatibility: { hardwaretypes: ["small"], imagetypes: ["debian12"], services: [SERVICE] },
      defaults: { services: [SERVICE], provider: providerEntity(p.name), hardwaretype: "small", imagetype: "debian12", config: {} },
      constraints: { size: { min: 1 } },
      administration: { leaseduration: { initial: 0, max: 0, step: 0 } },
    })),
  };
}
