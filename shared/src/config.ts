import { readFileSync } from "node:fs";
import { BadRequestError } from "@corral/contracts";

/**
 * Configuration uses the spec's property names (`server.port`, `security.enabled`, ...). Values come from
 * an optional config file (JSON, nested or flat; or Java-style `key=value` properties) and are overridden by
 * environment variables `CORRAL_` + the key upper-cased with dots as underscores (`CORRAL_SERVER_PORT`).
 */

type KeyType = "string" | "number" | "boolean";
interface KeySpec {
  type: KeyType;
  default: string | number | boolean;
  doc: string;
}

/** Every known key, its type, default and meaning. docs/configuration.md lists every key with its default (test/docs/configuration.test.ts checks it). */
export const CONFIG_KEYS = {
  "server.host": { type: "string", default: "0.0.0.0", doc: "bind address of the REST API" },
  "server.port": { type: "number", default: 55054, doc: "port of the REST API" },
  "server.maxRequestBytes": { type: "number", default: 4 * 1024 * 1024, doc: "largest accepted request body (413 past it)" },
  "server.maxUploadBytes": { type: "number", default: 1024 * 1024 * 1024, doc: "largest plugin resource upload (413 past it)" },
  "server.requestTimeoutMs": { type: "number", default: 15000, doc: "how long the gateway waits for a service" },
  "events.maxConnections": { type: "number", default: 10000, doc: "event streams (SSE and WebSocket) one gateway serves at once (503 past it)" },
  "events.maxBufferedBytes": { type: "number", default: 1024 * 1024, doc: "bytes an event stream client may fall behind before it is closed as too slow" },
  "events.heartbeatMs": { type: "number", default: 15000, doc: "interval of SSE heartbeat comments and of token re-checks on event streams" },
  "events.maxReplayEvents": { type: "number", default: 10000, doc: "past events one subscription replays before it asks the client to resume" },
  "events.maxRecentEvents": { type: "number", default: 20000, doc: "live events a gateway keeps in memory to replay to new clients without reading the stream" },
  "audit.enabled": { type: "boolean", default: true, doc: "the gateway and the token server record changes and refusals, the metrics service plans' ends, in the audit log" },
  "audit.maxAgeDays": { type: "number", default: 90, doc: "days the audit log keeps an entry (applied when the bus is prepared)" },
  "audit.maxBytes": { type: "number", default: 1024 * 1024 * 1024, doc: "bytes the audit log keeps at most; the oldest entries go first (applied when the bus is prepared)" },
  "webhooks.allowedNetworks": {
    type: "string",
    default: "",
    doc: "networks (CIDR, comma separated) webhook deliveries may reach although loopback, link-local, private or reserved",
  },
  "webhooks.retryDelaysMs": {
    type: "string",
    default: "2000,10000,60000,300000,900000,1800000,3600000",
    doc: "delays between the attempts of a webhook delivery, ms, comma separated; past the last the delivery failed and its endpoint is disabled",
  },
  "webhooks.attemptTimeoutMs": { type: "number", default: 10000, doc: "how long one webhook delivery attempt may take" },
  "webhooks.leaseMs": { type: "number", default: 15000, doc: "lease of the webhooks instance that delivers; another takes over at most this long after it died" },
  "nats.url": { type: "string", default: "nats://127.0.0.1:4222", doc: "NATS server URL(s), comma separated; nats://user:password@host:port logs in" },
  "redis.url": { type: "string", default: "redis://127.0.0.1:6379", doc: "Redis URL; redis://:password@host:port logs in" },
  "data.dir": { type: "string", default: ".corral/data", doc: "data and credentials of the embedded nats-server and redis-server" },
  "nats.embedded.port": { type: "number", default: 4222, doc: "port of the embedded nats-server (0, or taken: any free port)" },
  "redis.embedded.port": { type: "number", default: 6379, doc: "port of the embedded redis-server (0, or taken: any free port)" },
  "nats.syncAlways": { type: "boolean", default: true, doc: "embedded JetStream flushes every write (sync_interval: always)" },
  "nats.embedded.nodes": { type: "number", default: 1, doc: "nats-servers npm start runs: 1, or 3 for a local JetStream cluster (client ports nats.embedded.port and the next two)" },
  "nats.replicas": { type: "number", default: 0, doc: "replicas of every JetStream stream, KV bucket and object store; 0: 1 on a lone nats-server, 3 in a cluster of three or more (existing ones are migrated when the bus is prepared)" },
  "log.level": { type: "string", default: "info", doc: "debug, info, warn or error" },
  "metrics.enabled": { type: "boolean", default: true, doc: "each process serves Prometheus metrics at /metrics on a port of its own" },
  "metrics.host": { type: "string", default: "127.0.0.1", doc: "bind address of every process's metrics port (0.0.0.0 for a Prometheus on another host)" },
  "metrics.gateway.port": { type: "number", default: 9464, doc: "metrics port of the gateway (0: any free port, logged)" },
  "metrics.tenancy.port": { type: "number", default: 9465, doc: "metrics port of the tenancy service" },
  "metrics.clusters.port": { type: "number", default: 9466, doc: "metrics port of the clusters service" },
  "metrics.solver.port": { type: "number", default: 9467, doc: "metrics port of the solver service" },
  "metrics.plugins.port": { type: "number", default: 9468, doc: "metrics port of the plugins service" },
  "metrics.metrics.port": { type: "number", default: 9469, doc: "metrics port of the metrics service" },
  "metrics.auth.port": { type: "number", default: 9470, doc: "metrics port of the auth service" },
  "metrics.provisioner.port": { type: "number", default: 9471, doc: "metrics port of a provisioner" },
  "metrics.webhooks.port": { type: "number", default: 9472, doc: "metrics port of the webhooks service" },
  "instances.gateway": { type: "number", default: 1, doc: "gateway instances npm start runs (they share server.port)" },
  "instances.tenancy": { type: "number", default: 1, doc: "tenancy instances npm start runs" },
  "instances.clusters": { type: "number", default: 1, doc: "clusters instances npm start runs" },
  "instances.solver": { type: "number", default: 1, doc: "solver instances npm start runs" },
  "instances.plugins": { type: "number", default: 1, doc: "plugins instances npm start runs" },
  "instances.metrics": { type: "number", default: 1, doc: "metrics instances npm start runs" },
  "instances.auth": { type: "number", default: 1, doc: "auth instances npm start runs" },
  "instances.provisioner": { type: "number", default: 1, doc: "local provisioners npm start runs (with provisioner.local.enabled)" },
  "instances.webhooks": { type: "number", default: 1, doc: "webhooks instances npm start runs" },
  "tenancy.superadmin.workers": { type: "number", default: 0, doc: "workers of the superadmin tenant when it is first created" },
  "tenancy.takeoverAfterMs": { type: "number", default: 30000, doc: "age after which any tenancy instance finishes an interrupted import or tenant deletion" },
  "launcher.sharedProcess": {
    type: "string",
    default: "auth,metrics,plugins,webhooks",
    doc: "services npm start runs together in one process, saving a runtime's memory each (comma separated; empty: each in a process of its own; a service with several instances runs them alone)",
  },
  "provisioner.local.enabled": { type: "boolean", default: true, doc: "npm start also runs one local provisioner" },
  "provisioner.health.intervalMs": { type: "number", default: 30000, doc: "between two rounds of node health checks of a provisioner (0: none)" },
  "provisioner.plugins": {
    type: "string",
    default: "@corral/provider-ec2,@corral/provider-lxd",
    doc: "plugin modules a provisioner loads besides its bundled plugins, comma separated: package names or paths relative to its working directory",
  },
  "security.enabled": { type: "boolean", default: false, doc: "require Bearer tokens on the API" },
  "security.auth.server.address": { type: "string", default: "localhost", doc: "token server address" },
  "security.auth.server.bind.port": { type: "number", default: 55059, doc: "token server port" },
  "security.auth.server.ssl.keystore.path": { type: "string", default: "", doc: "TLS keystore of the token server" },
  "security.auth.server.ssl.keystore.password": { type: "string", default: "", doc: "keystore password" },
  "security.auth.server.ssl.keystore.keypassword": { type: "string", default: "", doc: "key password" },
  "security.auth.server.ssl.keystore.type": { type: "string", default: "JKS", doc: "keystore type" },
  "security.authentication.handlerClassName": { type: "string", default: "basic", doc: "basic, ldap, or a module path" },
  "security.authentication.loginmodule.className": { type: "string", default: "", doc: "login module" },
  "security.authentication.basic.realmfile": { type: "string", default: "", doc: "realm file for basic authentication" },
  "security.authentication.handler.debug": { type: "boolean", default: false, doc: "LDAP debug logging" },
  "security.authentication.handler.hostname": { type: "string", default: "", doc: "LDAP host" },
  "security.authentication.handler.port": { type: "number", default: 389, doc: "LDAP port" },
  "security.authentication.handler.userBaseDn": { type: "string", default: "", doc: "LDAP user base DN" },
  "security.authentication.handler.userRdnAttribute": { type: "string", default: "", doc: "LDAP user RDN attribute" },
  "security.authentication.handler.userObjectClass": { type: "string", default: "", doc: "LDAP user object class" },
  "security.authentication.handler.bindDn": { type: "string", default: "", doc: "LDAP bind DN" },
  "security.authentication.handler.bindPassword": { type: "string", default: "", doc: "LDAP bind password" },
  "security.authentication.handler.userIdAttribute": { type: "string", default: "", doc: "LDAP user id attribute" },
  "security.authentication.handler.userPasswordAttribute": { type: "string", default: "", doc: "LDAP password attribute" },
  "security.authentication.handler.roleBaseDn": { type: "string", default: "", doc: "LDAP role base DN" },
  "security.authentication.handler.roleNameAttribute": { type: "string", default: "", doc: "LDAP role name attribute" },
  "security.authentication.handler.roleMemberAttribute": { type: "string", default: "", doc: "LDAP role member attribute" },
  "security.authentication.handler.roleObjectClass": { type: "string", default: "", doc: "LDAP role object class" },
  "security.realm": { type: "string", default: "corral", doc: "realm named in WWW-Authenticate challenges" },
  "security.token.expiration.seconds": { type: "number", default: 86400, doc: "lifetime of an issued token (expires_in)" },
  "security.token.extended.expiration.seconds": { type: "number", default: 604800, doc: "lifetime of a token from GET /extendedtoken" },
  "security.login.maxFailuresPerUser": { type: "number", default: 5, doc: "failed logins of one user name within the window before 429" },
  "security.login.maxFailuresPerAddress": { type: "number", default: 20, doc: "failed logins from one client address within the window before 429" },
  "security.login.failureWindowSeconds": { type: "number", default: 60, doc: "window of the failed-login counters (and the longest Retry-After)" },
  "security.oidc.issuer": { type: "string", default: "", doc: "issuer URL of an OpenID Connect provider; set: single sign-on through it" },
  "security.oidc.providerName": { type: "string", default: "SSO", doc: "the provider's name on the console's sign-in button" },
  "security.oidc.clientId": { type: "string", default: "", doc: "Corral's client id at the provider" },
  "security.oidc.clientSecret": { type: "string", default: "", doc: "Corral's client secret at the provider (empty: a public client)" },
  "security.oidc.scopes": { type: "string", default: "openid profile email", doc: "scopes the token server asks for, space separated" },
  "security.oidc.redirectUri": { type: "string", default: "", doc: "the token server's callback URL as registered at the provider" },
  "security.oidc.consoleUrl": { type: "string", default: "", doc: "the console the browser returns to after signing in" },
  "security.oidc.userClaim": { type: "string", default: "preferred_username", doc: "claim naming the user" },
  "security.oidc.tenantClaim": { type: "string", default: "tenant", doc: "claim naming the user's tenant" },
  "security.oidc.defaultTenant": { type: "string", default: "", doc: "tenant of users whose token has no tenant claim (empty: refused)" },
  "security.oidc.roleClaim": { type: "string", default: "groups", doc: "claim holding the user's groups or roles" },
  "security.oidc.adminRole": { type: "string", default: "corral-admin", doc: "value of the role claim that makes a tenant admin" },
  "security.oidc.superadminRole": { type: "string", default: "", doc: "value of the role claim that makes the superadmin (empty: never)" },
  "security.oidc.bearer.enabled": { type: "boolean", default: false, doc: "the gateway accepts JWTs issued by the provider as Bearer tokens" },
  "security.oidc.bearer.audience": { type: "string", default: "", doc: "audience such JWTs must name (empty: the client id)" },
  "security.oidc.jwksCooldownSeconds": { type: "number", default: 30, doc: "least time between two reads of the provider's signing keys" },
} as const satisfies Record<string, KeySpec>;

export type ConfigKey = keyof typeof CONFIG_KEYS;
type ValueOf<K extends ConfigKey> = (typeof CONFIG_KEYS)[K]["type"] extends "number"
  ? number
  : (typeof CONFIG_KEYS)[K]["type"] extends "boolean"
    ? boolean
    : string;

/** The processes that serve metrics, each on its own port (`metrics.<process>.port`). */
export const METRICS_PROCESSES = ["gateway", "tenancy", "clusters", "solver", "plugins", "metrics", "auth", "provisioner", "webhooks"] as const;
export type MetricsProcess = (typeof METRICS_PROCESSES)[number];

/** The key of a process's metrics port: `gateway` -> `metrics.gateway.port`. */
export const metricsPortKey = (process: MetricsProcess) => `metrics.${process}.port` as const satisfies ConfigKey;

/** The key of how many instances of a process `npm start` runs: `clusters` -> `instances.clusters`. */
export const instancesKey = (process: MetricsProcess) => `instances.${process}` as const satisfies ConfigKey;

/**
 * The environment variable that tells a process which of its service's instances it is (`0`, `1`, ... under the
 * launcher; any label, such as a systemd instance name); a process with it logs it in every line (`instance`).
 */
export const INSTANCE_ENV = "CORRAL_INSTANCE";

/** Prefix whose keys are passed through untyped (custom authentication handlers). */
export const HANDLER_PREFIX = "security.authentication.handler.";

export interface CorralConfig {
  /** Typed value of a known key (its default when unset). */
  get<K extends ConfigKey>(key: K): ValueOf<K>;
  /** Every `security.authentication.handler.*` property with the prefix removed. */
  handlerProperties(): Readonly<Record<string, string>>;
  /** True when the key was set by the file or the environment. */
  isSet(key: ConfigKey): boolean;
}

export interface LoadConfigOptions {
  /** @default process.env is NOT read here; pass it (only `index.ts` files read process.env). */
  env?: Record<string, string | undefined>;
  /** Path of a config file; also taken from `CORRAL_CONFIG` in `env`. */
  file?: string;
  /** Values that win over file and environment (tests). */
  overrides?: Partial<Record<ConfigKey | string, string | number | boolean>>;
}

/** The environment variable that sets a key: `server.port` -> `CORRAL_SERVER_PORT`. */
export function envNameOf(key: string): string {
  return "CORRAL_" + key.toUpperCase().replace(/\./g, "_");
}

function flatten(value: unknown, prefix: string, out: Record<string, string>): void {
  if (value !== null && typeof value === "object" && !Array.isArray(value)) {
    for (const [k, v] of Object.entries(value)) flatten(v, prefix ? `${prefix}.${k}` : k, out);
  } else if (prefix) {
    out[prefix] = String(value);
  }
}

function readConfigFile(path: string): Record<string, string> {
  const text = readFileSync(path, "utf8");
  const out: Record<string, string> = {};
  if (path.endsWith(".json")) {
    flatten(JSON.parse(text), "", out);
    return out;
  }
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith("!")) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (m?.[1] !== undefined) out[m[1]] = m[2] ?? "";
  }
  return out;
}

function coerce(key: string, type: KeyType, raw: string | number | boolean): string | number | boolean {
  if (type === "string") return String(raw);
  if (type === "number") {
    const n = typeof raw === "number" ? raw : Number(String(raw).trim());
    if (!Number.isFinite(n) || String(raw).trim() === "") {
      throw new BadRequestError(`config ${key} must be a number, got "${String(raw)}"`);
    }
    return n;
  }
  if (typeof raw === "boolean") return raw;
  const s = String(raw).trim().toLowerCase();
  if (s === "true" || s === "1" || s === "yes") return true;
  if (s === "false" || s === "0" || s === "no") return false;
  throw new BadRequestError(`config ${key} must be true or false, got "${String(raw)}"`);
}

/** Reads, merges and checks configuration once; the result is frozen. */
export function loadConfig(options: LoadConfigOptions = {}): CorralConfig {
  const env = options.env ?? {};
  const file = options.file ?? env["CORRAL_CONFIG"];
  const raw: Record<string, string | number | boolean> = file ? readConfigFile(file) : {};
  const knownByEnv = new Map<string, string>();
  for (const key of Object.keys(CONFIG_KEYS)) knownByEnv.set(envNameOf(key), key);
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined || !name.startsWith("CORRAL_")) continue;
    const key = knownByEnv.get(name);
    if (key) raw[key] = value;
    else if (name.startsWith(envNameOf(HANDLER_PREFIX))) {
      raw[HANDLER_PREFIX + name.slice(envNameOf(HANDLER_PREFIX).length).toLowerCase()] = value;
    }
  }
  for (const [k, v] of Object.entries(options.overrides ?? {})) if (v !== undefined) raw[k] = v;

  const values = new Map<string, string | number | boolean>();
  for (const [key, spec] of Object.entries(CONFIG_KEYS) as [string, KeySpec][]) {
    const given = raw[key];
    values.set(key, given === undefined ? spec.default : coerce(key, spec.type, given));
  }
  const handler: Record<string, string> = {};
  for (const [k, v] of Object.entries(raw)) {
    if (k.startsWith(HANDLER_PREFIX)) handler[k.slice(HANDLER_PREFIX.length)] = String(v);
  }
  Object.freeze(handler);
  const setKeys = new Set(Object.keys(raw));
  return Object.freeze({
    get: <K extends ConfigKey>(key: K) => values.get(key) as ValueOf<K>,
    handlerProperties: () => handler,
    isSet: (key: ConfigKey) => setKeys.has(key),
  });
}
