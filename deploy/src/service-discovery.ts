import { access, readdir } from "node:fs/promises";
import { join } from "node:path";

/** A runnable part of Corral: its name and the entry file the launcher starts. */
export interface ServiceEntry {
  name: string;
  /** Path of the entry relative to the repository root, for example `services/gateway/src/index.ts`. */
  entry: string;
  /**
   * Path of its definition (`services/<name>/src/service-process.ts`, exporting `serviceProcess`) when it has one:
   * then it can run in the launcher's shared process.
   */
  definition?: string;
}

/**
 * Every `services/<name>` that has `src/index.ts` (sorted by name), then `provisioner` when
 * `provisioner/src/index.ts` exists. Folders without an entry yet are skipped.
 */
export async function discoverServices(root: string): Promise<ServiceEntry[]> {
  const found: ServiceEntry[] = [];
  let names: string[] = [];
  try {
    names = (await readdir(join(root, "services"), { withFileTypes: true }))
      .filter((d) => d.isDirectory())
      .map((d) => d.name)
      .sort();
  } catch {
    // no services folder
  }
  for (const name of names) {
    const entry = join("services", name, "src", "index.ts");
    if (await exists(join(root, entry))) {
      const definition = join("services", name, "src", "service-process.ts");
      found.push({ name, entry, ...((await exists(join(root, definition))) ? { definition } : {}) });
    }
  }
  const provisioner = join("provisioner", "src", "index.ts");
  if (await exists(join(root, provisioner))) {
    found.push({ name: "provisioner", entry: provisioner });
  }
  return found;
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}
