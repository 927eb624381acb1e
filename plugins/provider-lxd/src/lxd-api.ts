import { Agent as HttpAgent, request as httpRequest, type IncomingMessage, type RequestOptions as HttpRequestOptions } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * A small typed client of LXD's REST API (`/1.0`), over the daemon's unix socket or over HTTPS with a client
 * certificate. Plain node:http: npm has no maintained LXD client (the few packages are unmaintained wrappers of
 * a handful of calls), and the provider needs a dozen calls plus operation waits. Every request has a timeout
 * and fails with an `LxdError`.
 */

const DEFAULT_TIMEOUT_MS = 30_000;
/** One `/wait` call blocks at most this long on the server; longer waits are several calls. */
const WAIT_SLICE_S = 30;

/** Any failure of an LXD API call. */
export class LxdError extends Error {
  override readonly name: string = "LxdError";
}

/** LXD answered with an error; `lxdMessage` is its own explanation. */
export class LxdApiError extends LxdError {
  override readonly name = "LxdApiError";
  constructor(
    readonly status: number,
    readonly lxdMessage: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(`lxd: ${method} ${path} failed (${status}): ${lxdMessage}`);
  }
}

/** A background operation ended in failure or was cancelled. */
export class LxdOperationError extends LxdError {
  override readonly name = "LxdOperationError";
  constructor(
    readonly description: string,
    readonly lxdMessage: string,
  ) {
    super(`lxd: ${description} failed: ${lxdMessage}`);
  }
}

/** The daemon could not be reached (not running, wrong socket or address, no permission, TLS refused). */
export class LxdUnreachableError extends LxdError {
  override readonly name = "LxdUnreachableError";
  constructor(
    readonly endpoint: string,
    readonly code: string,
    detail: string,
  ) {
    super(`lxd: LXD is not reachable at ${endpoint}: ${detail}`);
  }
}

/** No answer within the request's timeout. */
export class LxdTimeoutError extends LxdError {
  override readonly name = "LxdTimeoutError";
  constructor(endpoint: string, method: string, path: string, timeoutMs: number) {
    super(`lxd: ${method} ${path} on ${endpoint} got no answer within ${timeoutMs} ms`);
  }
}

export const isLxdStatus = (err: unknown, status: number): err is LxdApiError => err instanceof LxdApiError && err.status === status;

/** Where the daemon listens and how to authenticate. */
export type LxdEndpoint =
  | { kind: "unix"; socketPath: string }
  | {
      kind: "https";
      /** `https://host:8443` */
      url: string;
      /** PEM client certificate and key the server trusts (`lxc config trust add`). */
      clientCert: string;
      clientKey: string;
      /** PEM of the server's (usually self-signed) certificate; absent: the system's CAs verify it. */
      serverCert?: string;
    };

export interface LxdClientOptions {
  endpoint: LxdEndpoint;
  /** `?project=` of every project-scoped call. @default "default" */
  project?: string;
  /** Per request. @default 30000 */
  timeoutMs?: number;
}

/** An entry of `GET /1.0/instances?recursion=1` (the fields the provider reads). */
export interface Instance {
  name: string;
  /** "Running", "Stopped", "Frozen", "Error", ... */
  status: string;
  status_code: number;
  /** "container" or "virtual-machine" */
  type: string;
  config: Record<string, string>;
  expanded_config?: Record<string, string>;
  devices?: Record<string, Record<string, string>>;
  expanded_devices?: Record<string, Record<string, string>>;
  profiles?: string[];
  /** RFC 3339 */
  created_at: string;
  project?: string;
}

export interface InstanceAddress {
  /** "inet" or "inet6" */
  family: string;
  address: string;
  netmask: string;
  /** "global", "link", "local" */
  scope: string;
}

/** `GET /1.0/instances/<name>/state` (the fields the provider reads). */
export interface InstanceState {
  status: string;
  status_code: number;
  pid?: number;
  network?: Record<string, { addresses: InstanceAddress[]; hwaddr?: string; state?: string; type?: string }> | null;
}

/** Body of `POST /1.0/instances`. */
export interface InstancesPost {
  name: string;
  type: string;
  source: { type: "image"; alias?: string; fingerprint?: string };
  config?: Record<string, string>;
  devices?: Record<string, Record<string, string>>;
  profiles?: string[];
  start?: boolean;
  description?: string;
}

/** A background operation (`/1.0/operations/<id>`). */
export interface Operation {
  id: string;
  class: string;
  description: string;
  /** 100-113 while going on, 200 success, 400 failure, 401 cancelled */
  status_code: number;
  status: string;
  err: string;
  resources?: Record<string, string[]> | null;
  metadata?: Record<string, unknown> | null;
}

export interface Network {
  name: string;
  managed: boolean;
  type: string;
  config: Record<string, string>;
}

/** What `GET /1.0` says about the server. */
export interface ServerInfo {
  api_extensions: string[];
  auth: string;
  environment?: { server_version?: string; server_name?: string };
}

interface LxdEnvelope {
  type: "sync" | "async" | "error";
  status_code?: number;
  error_code?: number;
  error?: string;
  operation?: string;
  metadata?: unknown;
}

interface RawResponse {
  status: number;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

interface CallOptions {
  query?: Record<string, string>;
  /** JSON body (object) or raw bytes. */
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Project-scoped calls carry `?project=`. @default true */
  project?: boolean;
}

const OPERATION_DONE = new Set([200, 400, 401]);

export class LxdClient {
  readonly endpoint: LxdEndpoint;
  readonly project: string;
  private readonly timeoutMs: number;
  private readonly agent: HttpAgent;

  constructor(options: LxdClientOptions) {
    this.endpoint = options.endpoint;
    this.project = options.project || "default";
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const e = this.endpoint;
    this.agent =
      e.kind === "unix"
        ? new HttpAgent({ keepAlive: true, maxSockets: 16 })
        : new HttpsAgent({
            keepAlive: true,
            maxSockets: 16,
            cert: e.clientCert,
            key: e.clientKey,
            ...(e.serverCert ? { ca: e.serverCert, checkServerIdentity: () => undefined } : {}),
          });
  }

  /** A description of the endpoint for messages: the socket path or the URL, with the project. */
  get where(): string {
    const e = this.endpoint;
    const base = e.kind === "unix" ? e.socketPath : e.url;
    return this.project === "default" ? base : `${base} (project ${this.project})`;
  }

  /** Closes idle keep-alive connections. */
  close(): void {
    this.agent.destroy();
  }

  async server(signal?: AbortSignal): Promise<ServerInfo> {
    return (await this.sync("GET", "/1.0", { signal, project: false })) as ServerInfo;
  }

  async listInstances(signal?: AbortSignal): Promise<Instance[]> {
    return ((await this.sync("GET", "/1.0/instances", { query: { recursion: "1" }, signal })) as Instance[] | null) ?? [];
  }

  /** The instance, or undefined when there is none of that name. */
  async getInstance(name: string, signal?: AbortSignal): Promise<Instance | undefined> {
    try {
      return (await this.sync("GET", `/1.0/instances/${encodeURIComponent(name)}`, { signal })) as Instance;
    } catch (err) {
      if (isLxdStatus(err, 404)) return undefined;
      throw err;
    }
  }

  async instanceState(name: string, signal?: AbortSignal): Promise<InstanceState | undefined> {
    try {
      return (await this.sync("GET", `/1.0/instances/${encodeURIComponent(name)}/state`, { signal })) as InstanceState;
    } catch (err) {
      if (isLxdStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /** Starts the creation (and, with `start`, the start) of an instance; the operation to wait for. */
  createInstance(body: InstancesPost, signal?: AbortSignal): Promise<Operation> {
    return this.async("POST", "/1.0/instances", { body, signal });
  }

  changeState(name: string, state: { action: "start" | "stop" | "restart"; force?: boolean; timeout?: number }, signal?: AbortSignal): Promise<Operation> {
    return this.async("PUT", `/1.0/instances/${encodeURIComponent(name)}/state`, { body: { timeout: -1, ...state }, signal });
  }

  deleteInstance(name: string, signal?: AbortSignal): Promise<Operation> {
    return this.async("DELETE", `/1.0/instances/${encodeURIComponent(name)}`, { signal });
  }

  /** A file of an instance; undefined when it does not exist. */
  async readFile(name: string, path: string, signal?: AbortSignal): Promise<Buffer | undefined> {
    const res = await this.raw("GET", `/1.0/instances/${encodeURIComponent(name)}/files`, { query: { path }, signal });
    if (res.status === 404) return undefined;
    if (res.status >= 400) throw this.apiError("GET", `/1.0/instances/${name}/files?path=${path}`, res);
    return res.body;
  }

  /** Writes a file into an instance (parents must exist), owner and mode as given. */
  async writeFile(
    name: string,
    path: string,
    content: string | Buffer,
    owner: { uid: number; gid: number; mode: number },
    signal?: AbortSignal,
  ): Promise<void> {
    await this.sync("POST", `/1.0/instances/${encodeURIComponent(name)}/files`, {
      query: { path },
      body: Buffer.from(content),
      headers: {
        "X-LXD-type": "file",
        "X-LXD-uid": String(owner.uid),
        "X-LXD-gid": String(owner.gid),
        "X-LXD-mode": `0${owner.mode.toString(8)}`,
        "X-LXD-write": "overwrite",
      },
      signal,
    });
  }

  /** Makes a directory in an instance; one that exists already is fine. */
  async makeDirectory(name: string, path: string, owner: { uid: number; gid: number; mode: number }, signal?: AbortSignal): Promise<void> {
    try {
      await this.sync("POST", `/1.0/instances/${encodeURIComponent(name)}/files`, {
        query: { path },
        headers: { "X-LXD-type": "directory", "X-LXD-uid": String(owner.uid), "X-LXD-gid": String(owner.gid), "X-LXD-mode": `0${owner.mode.toString(8)}` },
        signal,
      });
    } catch (err) {
      if (!(err instanceof LxdApiError && /exists/i.test(err.lxdMessage))) throw err;
    }
  }

  /** The last `lines` lines of a container's console log; empty when LXD has none. */
  async consoleTail(name: string, lines: number, signal?: AbortSignal): Promise<string> {
    const res = await this.raw("GET", `/1.0/instances/${encodeURIComponent(name)}/console`, { signal });
    if (res.status >= 400) return "";
    return res.body.toString("utf8").replace(/\r/g, "").trimEnd().split("\n").slice(-lines).join("\n");
  }

  async getNetwork(name: string, signal?: AbortSignal): Promise<Network | undefined> {
    try {
      return (await this.sync("GET", `/1.0/networks/${encodeURIComponent(name)}`, { signal })) as Network;
    } catch (err) {
      if (isLxdStatus(err, 404)) return undefined;
      throw err;
    }
  }

  async getProfile(name: string, signal?: AbortSignal): Promise<{ name: string; devices: Record<string, Record<string, string>> } | undefined> {
    try {
      return (await this.sync("GET", `/1.0/profiles/${encodeURIComponent(name)}`, { signal })) as {
        name: string;
        devices: Record<string, Record<string, string>>;
      };
    } catch (err) {
      if (isLxdStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /** The fingerprint an image alias points at; undefined when there is no such alias. */
  async imageAlias(alias: string, signal?: AbortSignal): Promise<string | undefined> {
    try {
      return ((await this.sync("GET", `/1.0/images/aliases/${encodeURIComponent(alias)}`, { signal })) as { target: string }).target;
    } catch (err) {
      if (isLxdStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /** Whether an image of this fingerprint (or unique fingerprint prefix) exists. */
  async hasImage(fingerprint: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.sync("GET", `/1.0/images/${encodeURIComponent(fingerprint)}`, { signal });
      return true;
    } catch (err) {
      if (isLxdStatus(err, 404)) return false;
      throw err;
    }
  }

  /** Operations going on (status codes below 200). */
  async runningOperations(signal?: AbortSignal): Promise<Operation[]> {
    const byStatus = ((await this.sync("GET", "/1.0/operations", { query: { recursion: "1" }, signal })) ?? {}) as Record<string, Operation[] | null>;
    return Object.values(byStatus)
      .flatMap((ops) => ops ?? [])
      .filter((op) => !OPERATION_DONE.has(op.status_code));
  }

  /**
   * Waits until the operation ends, in slices of {@link WAIT_SLICE_S} seconds, until `signal` aborts. Throws an
   * `LxdOperationError` when it failed or was cancelled; an operation the daemon forgot (it restarted) counts as
   * done, and the caller looks at the instance again.
   */
  async waitOperation(op: Operation, signal?: AbortSignal): Promise<Operation> {
    let current = op;
    while (!OPERATION_DONE.has(current.status_code)) {
      signal?.throwIfAborted();
      try {
        current = (await this.sync("GET", `/1.0/operations/${encodeURIComponent(op.id)}/wait`, {
          query: { timeout: String(WAIT_SLICE_S) },
          signal,
          project: false,
          timeoutMs: (WAIT_SLICE_S + 15) * 1000,
        })) as Operation;
      } catch (err) {
        if (isLxdStatus(err, 404)) return { ...current, status_code: 200, status: "Success" };
        throw err;
      }
    }
    if (current.status_code !== 200) throw new LxdOperationError(current.description || op.description, current.err || current.status);
    return current;
  }

  /** A call answered in `sync` form; its metadata. */
  private async sync(method: string, path: string, options: CallOptions & { timeoutMs?: number } = {}): Promise<unknown> {
    const res = await this.raw(method, path, options);
    const envelope = parseEnvelope(res.body);
    if (res.status >= 400 || envelope?.type === "error") throw this.apiError(method, path, res, envelope);
    return envelope?.metadata;
  }

  /** A call answered with a background operation (`async`, HTTP 202). */
  private async async(method: string, path: string, options: CallOptions = {}): Promise<Operation> {
    const res = await this.raw(method, path, options);
    const envelope = parseEnvelope(res.body);
    if (res.status >= 400 || envelope?.type === "error") throw this.apiError(method, path, res, envelope);
    const op = envelope?.metadata as Operation | undefined;
    if (envelope?.type !== "async" || !op?.id) {
      throw new LxdError(`lxd: ${method} ${path} answered ${res.status} without an operation: ${res.body.toString("utf8").slice(0, 300)}`);
    }
    return op;
  }

  private apiError(method: string, path: string, res: RawResponse, envelope = parseEnvelope(res.body)): LxdApiError {
    const message = envelope?.error || res.body.toString("utf8").trim().slice(0, 500) || `HTTP ${res.status}`;
    return new LxdApiError(envelope?.error_code || res.status, message, method, path);
  }

  private raw(method: string, path: string, options: CallOptions & { timeoutMs?: number }): Promise<RawResponse> {
    const query = new URLSearchParams(options.query ?? {});
    if (options.project !== false && this.project !== "default") query.set("project", this.project);
    const search = query.toString();
    const fullPath = search ? `${path}?${search}` : path;
    const headers: Record<string, string> = { ...options.headers };
    let payload: Buffer | undefined;
    if (Buffer.isBuffer(options.body)) {
      payload = options.body;
      headers["Content-Type"] ??= "application/octet-stream";
    } else if (options.body !== undefined) {
      payload = Buffer.from(JSON.stringify(options.body));
      headers["Content-Type"] = "application/json";
    }
    if (payload) headers["Content-Length"] = String(payload.length);
    const timeoutMs = options.timeoutMs ?? this.timeoutMs;
    const e = this.endpoint;
    const where = e.kind === "unix" ? e.socketPath : e.url;

    return new Promise<RawResponse>((resolve, reject) => {
      const base: HttpRequestOptions = { method, path: fullPath, headers, agent: this.agent, signal: options.signal };
      const onResponse = (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
        res.on("error", reject);
      };
      let req;
      if (e.kind === "unix") {
        req = httpRequest({ ...base, socketPath: e.socketPath, host: "lxd" }, onResponse);
      } else {
        const url = new URL(e.url);
        req = httpsRequest({ ...base, host: url.hostname, port: url.port || 8443 }, onResponse);
      }
      req.setTimeout(timeoutMs, () => req.destroy(new LxdTimeoutError(where, method, path, timeoutMs)));
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (err instanceof LxdError || err.name === "AbortError") return reject(err);
        const code = err.code ?? "";
        if (["ENOENT", "ECONNREFUSED", "EACCES", "ECONNRESET", "EHOSTUNREACH", "ENOTFOUND", "ETIMEDOUT"].includes(code) || code.startsWith("ERR_TLS") || /certificate|handshake/i.test(err.message)) {
          return reject(new LxdUnreachableError(where, code, err.message));
        }
        reject(new LxdError(`lxd: ${method} ${path} on ${where}: ${err.message}`));
      });
      req.end(payload);
    });
  }
}

function parseEnvelope(body: Buffer): LxdEnvelope | undefined {
  if (body.length === 0 || body[0] !== 0x7b /* { */) return undefined;
  try {
    return JSON.parse(body.toString("utf8")) as LxdEnvelope;
  } catch {
    return undefined;
  }
}

