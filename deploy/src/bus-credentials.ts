import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, open, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";

/** A NATS login. */
export interface NatsLogin {
  user: string;
  password: string;
}

/**
 * What the embedded servers require: one NATS user for the services, a narrower one for provisioners
 * (bus-permissions.ts), and the Redis password.
 */
export interface BusCredentials {
  services: NatsLogin;
  provisioner: NatsLogin;
  redisPassword: string;
}

/** Name of the credentials file in the data dir. */
export const CREDENTIALS_FILE = "credentials.json";

/** Fresh random credentials (192-bit hex passwords: no character a URL or a config file would need escaped). */
export function generateBusCredentials(): BusCredentials {
  const secret = () => randomBytes(24).toString("hex");
  return {
    services: { user: "corral-services", password: secret() },
    provisioner: { user: "corral-provisioner", password: secret() },
    redisPassword: secret(),
  };
}

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
  if (existing) {
    await chmod(path, 0o600);
    return { credentials: existing, path, created: false };
  }
  const credentials = generateBusCredentials();
  const partial = `${path}.partial-${process.pid}-${randomBytes(4).toString("hex")}`;
  const file = await open(partial, "wx", 0o600);
  try {
    await file.writeFile(`${JSON.stringify(credentials, null, 2)}\n`);
    await file.sync();
  } finally {
    await file.close();
  }
  let created: boolean;
  try {
    created = await linkExclusively(partial, path);
  } finally {
    await rm(partial, { force: true });
  }
  if (created) return { credentials, path, created };
  const theirs = await readCredentials(path);
  if (!theirs) throw new Error(`${path} vanished right after another process wrote it`);
  return { credentials: theirs, path, created: false };
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

async function readCredentials(path: string): Promise<BusCredentials | undefined> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
  const parsed = parseCredentials(text);
  if (!parsed) {
    throw new Error(`${path} is not a Corral credentials file (services, provisioner, redisPassword); move it away to have new ones made`);
  }
  return parsed;
}

function parseCredentials(text: string): BusCredentials | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const v = value as Partial<Record<keyof BusCredentials, unknown>> | null;
  if (!v || !isLogin(v.services) || !isLogin(v.provisioner) || typeof v.redisPassword !== "string" || !v.redisPassword) {
    return undefined;
  }
  return { services: v.services, provisioner: v.provisioner, redisPassword: v.redisPassword };
}

function isLogin(value: unknown): value is NatsLogin {
  const v = value as Partial<NatsLogin> | null;
  return typeof v?.user === "string" && v.user !== "" && typeof v.password === "string" && v.password !== "";
}
