/** Limits a `docker` flavor sets on a container (Docker's HostConfig units). */
export interface FlavorLimits {
  /** CPUs in units of 1e-9 CPUs. */
  nanoCpus?: number;
  memoryBytes?: number;
}

export type ParsedFlavor = { ok: true; limits: FlavorLimits } | { ok: false; error: string };

const UNITS: Record<string, number> = { k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4 };
/** Docker refuses less memory than this. */
const MIN_MEMORY_BYTES = 6 * 1024 ** 2;
const FLAVOR = /^(\d+(?:\.\d+)?|\.\d+)x(\d+(?:\.\d+)?)([kmgt])b?$/;

/**
 * A hardware type's flavor for the `docker` provider: `<cpus>x<memory>`, e.g. `1x512m`, `2x4g`, `0.5x256m`
 * (memory units k, m, g, t, binary; a trailing `b` is allowed). Empty means no limits.
 */
export function parseFlavor(flavor: string | undefined): ParsedFlavor {
  const text = (flavor ?? "").trim().toLowerCase();
  if (text === "") return { ok: true, limits: {} };
  const m = FLAVOR.exec(text);
  if (!m) {
    return { ok: false, error: `flavor "${flavor}" is not <cpus>x<memory> (for example 1x512m, 2x4g or 0.5x256m)` };
  }
  const cpus = Number(m[1]);
  const memoryBytes = Math.round(Number(m[2]) * UNITS[m[3]!]!);
  if (!(cpus > 0)) return { ok: false, error: `flavor "${flavor}" asks for no CPU; give a positive number of CPUs` };
  if (memoryBytes < MIN_MEMORY_BYTES) return { ok: false, error: `flavor "${flavor}" asks for less than 6m of memory, below Docker's minimum` };
  return { ok: true, limits: { nanoCpus: Math.round(cpus * 1e9), memoryBytes } };
}
