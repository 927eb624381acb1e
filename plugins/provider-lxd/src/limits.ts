import { parseFlavor } from "@corral/provisioner/sdk";

export type ParsedLimits = { ok: true; config: Record<string, string> } | { ok: false; error: string };

/**
 * A hardware type's flavor (`<cpus>x<memory>`, the docker provider's format) as LXD limits: a whole number of CPUs is
 * `limits.cpu` (the instance sees that many), a fraction a CFS quota (`limits.cpu.allowance`, e.g. 50ms/100ms for
 * 0.5) on one CPU; memory is `limits.memory` in bytes. Empty: no limits.
 */
export function flavorLimits(flavor: string | undefined): ParsedLimits {
  const parsed = parseFlavor(flavor);
  if (!parsed.ok) return parsed;
  const config: Record<string, string> = {};
  const { nanoCpus, memoryBytes } = parsed.limits;
  if (nanoCpus !== undefined) {
    const cpus = nanoCpus / 1e9;
    if (Number.isInteger(cpus)) {
      config["limits.cpu"] = String(cpus);
    } else {
      config["limits.cpu"] = String(Math.ceil(cpus));
      config["limits.cpu.allowance"] = `${Math.round(cpus * 100)}ms/100ms`;
    }
  }
  if (memoryBytes !== undefined) config["limits.memory"] = String(memoryBytes);
  return { ok: true, config };
}
