import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** Absolute path of the repository root (two levels above `deploy/src`). */
export const repoRoot: string = resolve(dirname(fileURLToPath(import.meta.url)), "..", "..");

/**
 * The directory that holds Corral's local state: the binary cache (`bin/`), locks and, for the
 * launcher, server data.
 * @default `<repo>/.corral`, or `CORRAL_DATA_DIR` when set
 */
export function defaultStateDir(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env["CORRAL_DATA_DIR"];
  return configured ? resolve(configured) : join(repoRoot, ".corral");
}
