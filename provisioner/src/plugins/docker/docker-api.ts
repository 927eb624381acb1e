import { request } from "node:http";

/**
 * A small typed client of the Docker Engine API over its unix socket (plain node:http). Only what the `docker`
 * provider needs; every request has a timeout and fails with a `DockerError`.
 */

/** API version prefix: Docker 20.10 speaks 1.41, and newer daemons still accept it. */
const API_PREFIX = "/v1.41";
const DEFAULT_TIMEOUT_MS = 30_000;

/** Any failure of a Docker API call. */
export class DockerError extends Error {
  override readonly name: string = "DockerError";
}

/** The daemon answered with an error status; `dockerMessage` is its own explanation. */
export class DockerApiError extends DockerError {
  override readonly name = "DockerApiError";
  constructor(
    readonly status: number,
    readonly dockerMessage: string,
    readonly method: string,
    readonly path: string,
  ) {
    super(`docker: ${method} ${path} failed (${status}): ${dockerMessage}`);
  }
}

/** The socket could not be reached (daemon down, wrong path, no permission). */
export class DockerUnreachableError extends DockerError {
  override readonly name = "DockerUnreachableError";
  constructor(
    readonly socketPath: string,
    readonly code: string,
    detail: string,
  ) {
    super(`docker: the Docker daemon is not reachable at ${socketPath}: ${detail}`);
  }
}

/** The daemon did not answer within the request's timeout. */
export class DockerTimeoutError extends DockerError {
  override readonly name = "DockerTimeoutError";
  constructor(socketPath: string, method: string, path: string, timeoutMs: number) {
    super(`docker: ${method} ${path} on ${socketPath} got no answer within ${timeoutMs} ms`);
  }
}

export const isDockerStatus = (err: unknown, status: number): err is DockerApiError =>
  err instanceof DockerApiError && err.status === status;

export type Labels = Record<string, string>;

/** A row of `GET /containers/json`. */
export interface ContainerSummary {
  Id: string;
  Names: string[];
  Image: string;
  Labels: Labels | null;
  /** created, running, paused, restarting, removing, exited, dead */
  State: string;
  Status: string;
  /** Unix seconds. */
  Created: number;
}

export interface ContainerState {
  Status: string;
  Running: boolean;
  Restarting: boolean;
  OOMKilled: boolean;
  ExitCode: number;
  Error: string;
  FinishedAt: string;
}

export interface EndpointSettings {
  IPAddress: string;
  Aliases: string[] | null;
}

/** The parts of `GET /containers/{id}/json` the provider reads. */
export interface ContainerInspect {
  Id: string;
  Name: string;
  /** RFC 3339. */
  Created: string;
  State: ContainerState;
  Config: { Hostname: string; Domainname: string; Image: string; Labels: Labels | null };
  HostConfig: { NanoCpus: number; Memory: number; NetworkMode: string };
  NetworkSettings: { Networks: Record<string, EndpointSettings> | null };
}

/** Body of `POST /containers/create` (the fields the provider sets). */
export interface ContainerCreateBody {
  Image: string;
  Hostname?: string;
  Domainname?: string;
  Env?: string[];
  Labels?: Labels;
  HostConfig?: { NanoCpus?: number; Memory?: number; NetworkMode?: string };
  NetworkingConfig?: { EndpointsConfig: Record<string, { Aliases?: string[] }> };
}

export interface NetworkInspect {
  Id: string;
  Name: string;
  Driver: string;
  /** RFC 3339. */
  Created: string;
}

export interface DockerClientOptions {
  socketPath: string;
  /** Per request. @default 30000 */
  timeoutMs?: number;
}

interface RequestOptions {
  query?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

interface RawResponse {
  status: number;
  body: Buffer;
}

export class DockerClient {
  readonly socketPath: string;
  private readonly timeoutMs: number;

  constructor(options: DockerClientOptions) {
    this.socketPath = options.socketPath;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  async ping(signal?: AbortSignal): Promise<void> {
    await this.call("GET", "/_ping", { signal });
  }

  /** Creates a container; returns its id. A missing image is a 404, a name in use a 409. */
  async createContainer(name: string, body: ContainerCreateBody, signal?: AbortSignal): Promise<string> {
    return (await this.json<{ Id: string }>("POST", "/containers/create", { query: { name }, body, signal })).Id;
  }

  /** Starts a container; one already running is fine (304). */
  async startContainer(id: string, signal?: AbortSignal): Promise<void> {
    await this.call("POST", `/containers/${encodeURIComponent(id)}/start`, { signal });
  }

  inspectContainer(idOrName: string, signal?: AbortSignal): Promise<ContainerInspect> {
    return this.json("GET", `/containers/${encodeURIComponent(idOrName)}/json`, { signal });
  }

  /** Containers (stopped ones too) carrying every given `key=value` label. */
  listContainers(labels: readonly string[], signal?: AbortSignal): Promise<ContainerSummary[]> {
    return this.json("GET", "/containers/json", { query: { all: "1", filters: JSON.stringify({ label: labels }) }, signal });
  }

  /** Removes a container, killing it when running; resolves false when it was already gone. */
  async removeContainer(id: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.call("DELETE", `/containers/${encodeURIComponent(id)}`, { query: { force: "1", v: "1" }, signal });
      return true;
    } catch (err) {
      if (isDockerStatus(err, 404)) return false;
      throw err;
    }
  }

  /** The last `tail` lines of a container's stdout and stderr (interleaved as Docker stored them). */
  async containerLogs(id: string, tail: number, signal?: AbortSignal): Promise<string> {
    const query = { stdout: "1", stderr: "1", tail: String(tail) };
    const res = await this.call("GET", `/containers/${encodeURIComponent(id)}/logs`, { query, signal });
    return demuxLogs(res.body);
  }

  /** The network, or undefined when there is none of that name. */
  async inspectNetwork(name: string, signal?: AbortSignal): Promise<NetworkInspect | undefined> {
    try {
      return await this.json<NetworkInspect>("GET", `/networks/${encodeURIComponent(name)}`, { signal });
    } catch (err) {
      if (isDockerStatus(err, 404)) return undefined;
      throw err;
    }
  }

  /** Every network named exactly `name` (Docker allows several of one name). */
  async listNetworks(name: string, signal?: AbortSignal): Promise<NetworkInspect[]> {
    const query = { filters: JSON.stringify({ name: [name] }) };
    const found = await this.json<NetworkInspect[]>("GET", "/networks", { query, signal });
    return found.filter((n) => n.Name === name);
  }

  /** Removes a network; resolves false when it was already gone. */
  async removeNetwork(id: string, signal?: AbortSignal): Promise<boolean> {
    try {
      await this.call("DELETE", `/networks/${encodeURIComponent(id)}`, { signal });
      return true;
    } catch (err) {
      if (isDockerStatus(err, 404)) return false;
      throw err;
    }
  }

  /** Creates a user-defined bridge network; returns its id. */
  async createNetwork(name: string, labels: Labels, signal?: AbortSignal): Promise<string> {
    const body = { Name: name, Driver: "bridge", CheckDuplicate: true, Labels: labels };
    return (await this.json<{ Id: string }>("POST", "/networks/create", { body, signal })).Id;
  }

  private async json<T>(method: string, path: string, options: RequestOptions): Promise<T> {
    const res = await this.call(method, path, options);
    return JSON.parse(res.body.toString("utf8")) as T;
  }

  private call(method: string, path: string, options: RequestOptions): Promise<RawResponse> {
    const query = options.query ? `?${new URLSearchParams(options.query).toString()}` : "";
    const payload = options.body === undefined ? undefined : Buffer.from(JSON.stringify(options.body));
    return new Promise<RawResponse>((resolve, reject) => {
      const req = request(
        {
          socketPath: this.socketPath,
          // A connection per request: a kept-alive one the daemon closed meanwhile would fail the next request.
          agent: false,
          method,
          path: `${API_PREFIX}${path}${query}`,
          headers: payload ? { "Content-Type": "application/json", "Content-Length": payload.length } : {},
          ...(options.signal ? { signal: options.signal } : {}),
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("error", fail);
          res.on("end", () => {
            clearTimeout(timer);
            const status = res.statusCode ?? 0;
            const body = Buffer.concat(chunks);
            if (status < 400) resolve({ status, body });
            else reject(new DockerApiError(status, errorMessage(body), method, path));
          });
        },
      );
      const timer = setTimeout(() => {
        fail(new DockerTimeoutError(this.socketPath, method, path, this.timeoutMs));
        req.destroy();
      }, this.timeoutMs);
      function fail(err: Error) {
        clearTimeout(timer);
        reject(err);
      }
      req.on("error", (err: NodeJS.ErrnoException) => {
        if (err instanceof DockerError || err.name === "AbortError") return fail(err);
        fail(new DockerUnreachableError(this.socketPath, err.code ?? "", err.code ? `${err.code} (${err.message})` : err.message));
      });
      req.end(payload);
    });
  }
}

/** Docker's `{"message": "..."}`, or the raw body. */
function errorMessage(body: Buffer): string {
  const text = body.toString("utf8").trim();
  try {
    const parsed = JSON.parse(text) as { message?: unknown };
    if (typeof parsed.message === "string") return parsed.message;
  } catch {
    // not JSON: use the text
  }
  return text || "no message";
}

/**
 * Logs of a container without a TTY come as frames: one byte stream type, three zero bytes, a big-endian uint32
 * length, the payload. A body that does not look framed is returned as it is.
 */
export function demuxLogs(body: Buffer): string {
  const parts: Buffer[] = [];
  let at = 0;
  while (at + 8 <= body.length) {
    const type = body[at]!;
    if (type > 2 || body[at + 1] !== 0 || body[at + 2] !== 0 || body[at + 3] !== 0) return body.toString("utf8");
    const size = body.readUInt32BE(at + 4);
    parts.push(body.subarray(at + 8, at + 8 + size));
    at += 8 + size;
  }
  return at === body.length ? Buffer.concat(parts).toString("utf8") : body.toString("utf8");
}
