/**
 * The settings a command runs with, each from the first place that has it: flags, then the environment
 * (`CORRAL_URL`, `CORRAL_USER`, `CORRAL_TENANT`, `CORRAL_TOKEN`, `CORRAL_TOKEN_URL`), then the profile
 * (`--profile`, `CORRAL_PROFILE`, the file's `current`, else `default`).
 */
import { UsageError } from "../errors.js";
import { DEFAULT_PROFILE, PROFILE_KEYS, type Profile, type ProfileFile } from "./profile-file.js";

export type SettingKey = (typeof PROFILE_KEYS)[number];
export type SettingSource = "flag" | "env" | "profile" | "default";

export interface Settings {
  /** API base URL including the version segment (`http://host:55054/v2`). */
  url: string;
  user?: string;
  tenant?: string;
  token?: string;
  tokenUrl?: string;
  /** The profile read (and written by `login` and `config set`). */
  profile: string;
  /** Where each setting came from. */
  sources: Partial<Record<SettingKey, SettingSource>>;
}

export const DEFAULT_URL = "http://localhost:55054";
const VERSION_SEGMENT = "/v2";

const ENV_NAMES: Record<SettingKey, string> = {
  url: "CORRAL_URL",
  user: "CORRAL_USER",
  tenant: "CORRAL_TENANT",
  token: "CORRAL_TOKEN",
  tokenUrl: "CORRAL_TOKEN_URL",
};

export function profileNameOf(flagProfile: string | undefined, env: NodeJS.ProcessEnv, file: ProfileFile): string {
  return flagProfile || env["CORRAL_PROFILE"] || file.current || DEFAULT_PROFILE;
}

export function resolveSettings(flags: Profile & { profile?: string }, env: NodeJS.ProcessEnv, file: ProfileFile): Settings {
  const profile = profileNameOf(flags.profile, env, file);
  const stored = file.profiles[profile] ?? {};
  const values: Profile = {};
  const sources: Settings["sources"] = {};
  for (const key of PROFILE_KEYS) {
    const candidates: Array<[SettingSource, string | undefined]> = [
      ["flag", flags[key]],
      ["env", env[ENV_NAMES[key]]],
      ["profile", stored[key]],
    ];
    const found = candidates.find(([, value]) => value !== undefined && value !== "");
    if (found) {
      values[key] = found[1];
      sources[key] = found[0];
    }
  }
  sources.url ??= "default";
  return { ...values, url: apiBaseUrl(values.url ?? DEFAULT_URL), profile, sources };
}

/** `host:port`, `http://host:port` or `.../v2` -> `http://host:port/v2`. */
export function apiBaseUrl(given: string): string {
  const withScheme = /^[a-z]+:\/\//i.test(given) ? given : `http://${given}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new UsageError(`--url ${given} is not a URL`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new UsageError(`--url ${given}: only http and https are spoken`);
  const path = url.pathname.replace(/\/+$/, "");
  url.pathname = path.endsWith(VERSION_SEGMENT) ? path : `${path}${VERSION_SEGMENT}`;
  return url.toString().replace(/\/+$/, "");
}

/** The identity every API call needs; a missing one is a usage error saying where to set it. */
export function requireIdentity(settings: Settings): { user: string; tenant: string } {
  const missing = (what: "user" | "tenant") =>
    new UsageError(`no ${what}: give --${what}, set ${ENV_NAMES[what]}, or store it with \`corral config set --${what} <${what}>\``);
  if (!settings.user) throw missing("user");
  if (!settings.tenant) throw missing("tenant");
  return { user: settings.user, tenant: settings.tenant };
}
