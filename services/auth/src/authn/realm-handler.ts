import { readFileSync, statSync } from "node:fs";
import type { Logger } from "@corral/shared";
import { credentialMatches, parseRealm, type Realm } from "../domain/realm.js";
import type { AuthenticationHandler } from "./types.js";

/**
 * Basic authentication against a realm file (`security.authentication.basic.realmfile`). The file is re-read
 * when its modification time or size changes, so users can be added without a restart.
 */
export function createRealmHandler(path: string, log: Logger): AuthenticationHandler {
  if (!path) throw new Error("security.authentication.basic.realmfile is required for basic authentication");
  let loaded: { realm: Realm; stamp: string } | undefined;
  const current = (): Realm => {
    const st = statSync(path);
    const stamp = `${st.mtimeMs}:${st.size}`;
    if (loaded?.stamp !== stamp) {
      const realm = parseRealm(readFileSync(path, "utf8"));
      for (const problem of realm.problems) log.warn("realm file problem", { path, problem });
      loaded = { realm, stamp };
    }
    return loaded.realm;
  };
  current(); // a missing or unreadable file fails the start, not the first login
  return {
    async authenticate(user, password) {
      const entry = current().users.get(user);
      // Compare even for unknown users, so the answer time does not tell which names exist.
      const ok = credentialMatches(entry?.credential ?? "\u0000unknown-user", password);
      return entry && ok ? { roles: [...entry.roles] } : null;
    },
  };
}
