/**
 * The profile file: named profiles of settings, and which one is current. JSON at `$CORRAL_CLI_CONFIG`, else
 * `$XDG_CONFIG_HOME/corral/config.json`, else `~/.config/corral/config.json`; written with mode 0600 (it may
 * hold a token).
 */
import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { UsageError } from "../errors.js";

/** Settings one profile keeps; every field optional. */
export interface Profile {
  url?: string;
  user?: string;
  tenant?: string;
  token?: string;
  /** Where `corral login` asks for tokens (`.../token`). */
  tokenUrl?: string;
}
export const PROFILE_KEYS = ["url", "user", "tenant", "token", "tokenUrl"] as const satisfies readonly (keyof Profile)[];

export interface ProfileFile {
  /** The profile used when none is named. @default "default" */
  current?: string;
  profiles: Record<string, Profile>;
}

export const DEFAULT_PROFILE = "default";

export function profileFilePath(env: NodeJS.ProcessEnv): string {
  const explicit = env["CORRAL_CLI_CONFIG"];
  if (explicit) return explicit;
  return join(env["XDG_CONFIG_HOME"] || join(homedir(), ".config"), "corral", "config.json");
}

/** The file's profiles; an absent file is an empty one. */
export async function readProfileFile(path: string): Promise<ProfileFile> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return { profiles: {} };
    throw new UsageError(`cannot read the profile file ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new UsageError(`the profile file ${path} is not JSON: ${(err as Error).message}`);
  }
  return checkProfileFile(parsed, path);
}

function checkProfileFile(value: unknown, path: string): ProfileFile {
  const bad = (what: string) => new UsageError(`the profile file ${path}: ${what}`);
  if (!isObject(value)) throw bad("must be a JSON object {current?, profiles}");
  const { current, profiles = {} } = value;
  if (current !== undefined && typeof current !== "string") throw bad("current must be a profile name");
  if (!isObject(profiles)) throw bad("profiles must be an object of name -> profile");
  for (const [name, profile] of Object.entries(profiles)) {
    if (!isObject(profile)) throw bad(`profile ${name} must be an object`);
    for (const [key, v] of Object.entries(profile)) {
      if (!(PROFILE_KEYS as readonly string[]).includes(key)) throw bad(`profile ${name}: unknown key ${key} (known: ${PROFILE_KEYS.join(", ")})`);
      if (typeof v !== "string") throw bad(`profile ${name}: ${key} must be a string`);
    }
  }
  return { ...(current !== undefined ? { current } : {}), profiles: profiles as Record<string, Profile> };
}

/** Writes the whole file atomically (a temporary file renamed over it), readable by its owner only. */
export async function writeProfileFile(path: string, file: ProfileFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${JSON.stringify(file, null, 2)}\n`, { mode: 0o600 });
  await rename(temporary, path);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
