import { resolve } from "node:path";
import { loadConfig } from "@corral/shared";

/**
 * What a local action must never see on this machine besides the work directory: the data directory (NATS and
 * Redis stores, credentials), the config file and the key store and realm file it names (when the server runs
 * here too), and the provisioner's home (SSH keys and the like). Relative paths resolve against the current
 * directory, as the services resolve them.
 */
export function privatePaths(env: Record<string, string | undefined>): string[] {
  const shared = loadConfig({ env });
  return [
    shared.get("data.dir"),
    env["CORRAL_CONFIG"],
    shared.get("security.auth.server.ssl.keystore.path"),
    shared.get("security.authentication.basic.realmfile"),
    env["HOME"],
  ]
    .filter((p): p is string => typeof p === "string" && p.trim() !== "")
    .map((p) => resolve(p));
}
