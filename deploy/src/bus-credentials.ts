import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { CORRAL_SERVICES, mapServices, type CorralService } from "./service-access.js";

/** A NATS login. */
export interface NatsLogin {
  user: string;
  password: string;
}

/**
 * What the servers require: a NATS user of each service and of provisioners, each allowed only what that process
 * does (bus-permissions.ts), an admin user that may do anything (the launcher creates the streams and buckets with
 * it), and the Redis password.
 */
export interface BusCredentials {
  admin: NatsLogin;
  services: Record<CorralService, NatsLogin>;
  provisioner: NatsLogin;
  redisPassword: string;
}

/** Name of the credentials file in the data dir. */
export const CREDENTIALS_FILE = "credentials.json";

/** Fresh random credentials (192-bit hex passwords: no character a URL or a config file would need escaped). */
export function generateBusCredentials(): BusCredentials {
  return {
    admin: newLogin("admin"),
    services: generateServiceLogins(),
    provisioner: newLogin("provisioner"),
    redisPassword: secret(),
  };
}

const secret = (): string => randomBytes(24).toString("hex");
const newLogin = (process: string): NatsLogin => ({ user: `corral-${process}`, password: secret() });

const generateServiceLogins = (): Record<CorralService, NatsLogin> => mapServices(newLogin);

/**
 * The installation's credentials from `<dataDir>/credentials.json`, made at the first start. The data dir is
 * made (or tightened to) mode 0700 and the file is 0600, so only the user that runs Corral reads them. Two
 * launchers racing on a fresh data dir agree: the file is created exclusively and the loser reads the winner's.
 */
export async function loadOrCreateBusCredentials(dataDir: string): Promise<{ credentials: BusCredentials; path: string; created: boolean }> {
  await mkdir(dataDir, { recursive: true, mode: 0o700 });
  await chmod(dataDir, 0o700);
  const path = join(dataDir, CREDENTIALS_FILE);
  const existing = await readCredentials(path);
  if (existing && "upgraded" in existing) {
    // The file of a release with one services user: that user becomes the admin, each service gets its own.
    const partial = await writePartial(path, existing.upgraded);
    await rename(partial, path);
    return { credentials: existing.upgraded, path, created: false };
  }
  if (existing) {
    await chmod(path, 0o600);
    return { credentials: existing, path, created: false };
  }
  const credentials = generateBusCredentials();
  const partial = await writePartial(path, credentials);
  let created: boolean;
  try {
    created = await linkExclusively(partial, path);
  } finally {
    await rm(partial, { force: true });
  }
  if (created) return { credentials, path, created };
  const theirs = await readCredentials(path);
  if (!theirs || "upgraded" in theirs) throw new Error(`${path} vanished right after another process wrote it`);
  return { credentials: theirs, path, created: false };
}

/** Writes credentials to a fresh mode-0600 file beside `path`, synced; returns its name. */
async function writePartial(path: string, credentials: BusCredentials): Promise<string> {
  const partial = `${path}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
  const file = await open(partial, "wx", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(credentials, null, 2)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  return partial;
}

/**
 * Puts `from` at `to` unless `to` exists (false then). `rename` would replace a file another launcher just
 * wrote; a hard link fails instead.
 */
async function linkExclusively(from: string, to: string): Promise<boolean> {
  try {
    await link(from, to);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EEXIST") return false;
    if (code === "EPERM" || code === "ENOTSUP") {
      await rename(from, to); // a file system without hard links
      return true;
    }
    throw err;
  }
}

async function readCredentials(path: string): Promise<BusCredentials | { upgraded: BusCredentials } | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const parsed = parseCredentials(text);
  if (!parsed) {
    throw new Error(`${path} is not a Corral credentials file (admin, services, provisioner, redisPassword); move it away to have new ones made`);
  }
  return parsed;
}

function parseCredentials(text: string): BusCredentials | { upgraded: BusCredentials } | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const v = value as Partial<Record<keyof BusCredentials, unknown>> | null;
  if (!v || !isLogin(v.provisioner) || typeof v.redisPassword !== "string" || !v.redisPassword) {
    return undefined;
  }
  const { provisioner, redisPassword } = { provisioner: v.provisioner, redisPassword: v.redisPassword };
  if (!v.admin && isLogin(v.services)) {
    return { upgraded: { admin: v.services, services: generateServiceLogins(), provisioner, redisPassword } };
  }
  if (!isLogin(v.admin) || !isServiceLogins(v.services)) return undefined;
  return { admin: v.admin, services: v.services, provisioner, redisPassword };
}

function isServiceLogins(value: unknown): value is Record<CorralService, NatsLogin> {
  const v = value as Partial<Record<CorralService, unknown>> | null;
  return typeof v === "object" && v !== null && CORRAL_SERVICES.every((s) => isLogin(v[s]));
}

function isLogin(value: unknown): value is NatsLogin {
  const v = value as Partial<NatsLogin> | null;
  return typeof v?.user === "string" && v.user !== "" && typeof v.password === "string" && v.password !== "";
}
