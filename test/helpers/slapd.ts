/**
 * A throwaway OpenLDAP server for tests: cn=config and the directory are built with slapadd in a temp dir, slapd runs
 * in the foreground (`-d 0`, so the pid is slapd's own) on a random free 127.0.0.1 port, and `stop()` kills it and
 * removes the dir. The programs come from `ensureSlapd()` (apt-get installs them when missing).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { Client } from "ldapts";
import { ensureSlapd, freePort } from "@corral/deploy";

export interface LdapUser {
  uid: string;
  password: string;
  /** @default uid */
  cn?: string;
}

export interface LdapGroup {
  cn: string;
  /** uids of the members */
  members: string[];
}

export interface SlapdOptions {
  /** @default "dc=corral,dc=test" (must be `dc=<a>,dc=<b>`) */
  suffix?: string;
  /** Users under `ou=people`. @default none */
  users?: LdapUser[];
  /** groupOfNames entries under `ou=groups` (members by DN). @default none */
  groups?: LdapGroup[];
  /** @default 30_000 ms */
  startTimeoutMs?: number;
}

export interface SlapdHandle {
  /** `ldap://127.0.0.1:<port>` */
  url: string;
  host: string;
  port: number;
  suffix: string;
  /** The root DN (`cn=admin,<suffix>`) and its password, usable as a service bind account. */
  adminDn: string;
  adminPassword: string;
  /** `ou=people,<suffix>` */
  peopleDn: string;
  /** `ou=groups,<suffix>` */
  groupsDn: string;
  /** Stops slapd (SIGTERM, SIGKILL after 5 s) and removes its directory. Idempotent. */
  stop(): Promise<void>;
  [Symbol.asyncDispose](): Promise<void>;
}

const ADMIN_PASSWORD = "adminpw";

function run(cmd: string, args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    child.stdout.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr.on("data", (d: Buffer) => (out += d.toString()));
    child.once("error", reject);
    child.once("exit", (code) => resolve({ code, out }));
  });
}

async function hash(slappasswd: string, password: string): Promise<string> {
  const r = await run(slappasswd, ["-s", password]);
  if (r.code !== 0) throw new Error(`slappasswd failed: ${r.out}`);
  return r.out.trim();
}

function configLdif(dir: string, suffix: string, adminHash: string): string {
  return `dn: cn=config
objectClass: olcGlobal
cn: config
olcPidFile: ${dir}/slapd.pid

dn: cn=module{0},cn=config
objectClass: olcModuleList
cn: module{0}
olcModulePath: /usr/lib/ldap
olcModuleLoad: back_mdb

dn: cn=schema,cn=config
objectClass: olcSchemaConfig
cn: schema

include: file:///etc/ldap/schema/core.ldif
include: file:///etc/ldap/schema/cosine.ldif
include: file:///etc/ldap/schema/nis.ldif
include: file:///etc/ldap/schema/inetorgperson.ldif

dn: olcDatabase={-1}frontend,cn=config
objectClass: olcDatabaseConfig
objectClass: olcFrontendConfig
olcDatabase: {-1}frontend

dn: olcDatabase={0}config,cn=config
objectClass: olcDatabaseConfig
olcDatabase: {0}config
olcAccess: {0}to * by dn.exact=gidNumber=0+uidNumber=0,cn=peercred,cn=external,cn=auth manage by * break

dn: olcDatabase={1}mdb,cn=config
objectClass: olcDatabaseConfig
objectClass: olcMdbConfig
olcDatabase: {1}mdb
olcSuffix: ${suffix}
olcRootDN: cn=admin,${suffix}
olcRootPW: ${adminHash}
olcDbDirectory: ${dir}/db
olcDbMaxSize: 104857600
olcDbIndex: objectClass eq
olcDbIndex: uid eq
olcAccess: {0}to attrs=userPassword by self write by anonymous auth by * none
olcAccess: {1}to * by users read by * none
`;
}

/** Escapes an RDN value (RFC 4514) so user names like `o'neil, jr` make valid DNs. */
function rdnValue(value: string): string {
  return value.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/^([#\s])/, "\\$1");
}

async function dataLdif(slappasswd: string, suffix: string, users: LdapUser[], groups: LdapGroup[]): Promise<string> {
  const dc = /^dc=([^,]+),/.exec(suffix)?.[1] ?? "corral";
  const entries = [
    `dn: ${suffix}\nobjectClass: dcObject\nobjectClass: organization\ndc: ${dc}\no: Corral Test`,
    `dn: ou=people,${suffix}\nobjectClass: organizationalUnit\nou: people`,
    `dn: ou=groups,${suffix}\nobjectClass: organizationalUnit\nou: groups`,
  ];
  for (const u of users) {
    entries.push(
      `dn: uid=${rdnValue(u.uid)},ou=people,${suffix}\nobjectClass: inetOrgPerson\nuid: ${u.uid}\ncn: ${u.cn ?? u.uid}\nsn: ${u.uid}\n` +
        `userPassword: ${await hash(slappasswd, u.password)}`,
    );
  }
  for (const g of groups) {
    // groupOfNames needs at least one member.
    const members = g.members.length > 0 ? g.members.map((m) => `uid=${rdnValue(m)},ou=people,${suffix}`) : [`cn=admin,${suffix}`];
    entries.push(`dn: cn=${g.cn},ou=groups,${suffix}\nobjectClass: groupOfNames\ncn: ${g.cn}\n${members.map((m) => `member: ${m}`).join("\n")}`);
  }
  return entries.join("\n\n") + "\n";
}

async function answers(url: string, adminDn: string): Promise<boolean> {
  const client = new Client({ url, timeout: 1000, connectTimeout: 1000 });
  try {
    await client.bind(adminDn, ADMIN_PASSWORD);
    return true;
  } catch {
    return false;
  } finally {
    await client.unbind().catch(() => {});
  }
}

/** Starts slapd with the given users and groups; retries once when the picked port was taken meanwhile. */
export async function startSlapd(options: SlapdOptions = {}): Promise<SlapdHandle> {
  const bins = await ensureSlapd();
  const suffix = options.suffix ?? "dc=corral,dc=test";
  const dir = await mkdtemp(join(tmpdir(), "corral-slapd-"));
  try {
    await mkdir(join(dir, "slapd.d"));
    await mkdir(join(dir, "db"));
    await writeFile(join(dir, "config.ldif"), configLdif(dir, suffix, await hash(bins.slappasswd, ADMIN_PASSWORD)));
    await writeFile(join(dir, "data.ldif"), await dataLdif(bins.slappasswd, suffix, options.users ?? [], options.groups ?? []));
    for (const [db, file] of [["0", "config.ldif"], ["1", "data.ldif"]] as const) {
      const r = await run(bins.slapadd, ["-n", db, "-F", join(dir, "slapd.d"), "-l", join(dir, file)]);
      if (r.code !== 0) throw new Error(`slapadd -n ${db} failed (exit ${r.code}):\n${r.out}`);
    }
    let lastError: unknown;
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        return await launch(bins.slapd, dir, suffix, options.startTimeoutMs ?? 30_000);
      } catch (err) {
        lastError = err;
      }
    }
    throw lastError;
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function launch(slapd: string, dir: string, suffix: string, timeoutMs: number): Promise<SlapdHandle> {
  const port = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const adminDn = `cn=admin,${suffix}`;
  const child: ChildProcess = spawn(slapd, ["-F", join(dir, "slapd.d"), "-h", `${url}/`, "-d", "0"], {
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-4000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exitedFlag = false;
  const exited = new Promise<void>((resolve) => {
    child.once("exit", () => {
      exitedFlag = true;
      resolve();
    });
    child.once("error", (err) => {
      output += String(err);
      exitedFlag = true;
      resolve();
    });
  });
  const deadline = Date.now() + timeoutMs;
  for (let delay = 10; ; delay = Math.min(delay * 2, 200)) {
    if (exitedFlag) throw new Error(`slapd exited before it was ready (port ${port}):\n${output}`);
    if (await answers(url, adminDn)) break;
    if (Date.now() > deadline) {
      child.kill("SIGKILL");
      await exited;
      throw new Error(`slapd was not ready after ${timeoutMs} ms:\n${output}`);
    }
    await Promise.race([sleep(delay), exited]);
  }
  let stopping: Promise<void> | undefined;
  const stop = () => {
    stopping ??= (async () => {
      if (!exitedFlag) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true });
    })();
    return stopping;
  };
  return {
    url,
    host: "127.0.0.1",
    port,
    suffix,
    adminDn,
    adminPassword: ADMIN_PASSWORD,
    peopleDn: `ou=people,${suffix}`,
    groupsDn: `ou=groups,${suffix}`,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
