import uWS from "uWebSockets.js";
import type { HttpRequest, HttpResponse, us_listen_socket } from "uWebSockets.js";
import type { NatsConnection } from "@nats-io/transport-node";
import { BadRequestError, CorralError, ForbiddenError, UnauthorizedError, UnavailableError } from "@corral/contracts";
import { forwardRestCall, openAuditLog, type Logger, type MetricsRegistry } from "@corral/shared";
import { requestAudit } from "./audit/request-audit.js";
import { framingProblem } from "./framing.js";
import { BodyTooLargeError, dropBody, readBody, type Exchange } from "./http.js";
import { callerCheck, type CallerCheck } from "./caller.js";
import { openEventStreams, type EventStreamOptions } from "./events/index.js";
import { API_KEY_HEADER, TENANT_HEADER, USER_HEADER, isAllowed } from "./identity.js";
import { openGatewayAnswers } from "./gateway-answers.js";
import { openConsole } from "./console.js";
import { openGuides, REPOSITORY_DOCS } from "./guides/guides.js";
import { createRouter } from "./router.js";
import { apiRoutes, type Route } from "./routes.js";
import { openTenantDirectory, type TenantDirectory } from "./tenant-directory.js";
import { openUploadSink } from "./upload.js";
import { createRequestTelemetry, TracedExchange } from "./request-telemetry.js";
import type { GatewaySecurity } from "./security.js";

/** The version segment every API path starts with. */
export const API_VERSION = "v2";

export interface GatewayOptions {
  /** @default "0.0.0.0" */
  host?: string;
  /** 0 picks a free port. @default 55054 */
  port?: number;
  /** @default 4 MiB */
  maxRequestBytes?: number;
  /** @default 15000 */
  requestTimeoutMs?: number;
  /** Largest upload body (plugin resources). @default 1 GiB */
  maxUploadBytes?: number;
  /** Limits of the live event streams (config `events.*`). */
  events?: EventStreamOptions;
  /** The guides served at `/docs`. @default the repository's docs/ folder */
  docsDir?: string;
  /** Changes and refusals are recorded in the audit log (`audit.enabled`). @default true */
  audit?: boolean;
}

export interface GatewayDeps extends GatewayOptions {
  nc: NatsConnection;
  log: Logger;
  /** Bearer-token checks (`security.enabled`); absent: identity headers alone. The caller stops it. */
  security?: GatewaySecurity;
  /** The process's Prometheus metrics: requests by route and status with their latency. @default none */
  metrics?: MetricsRegistry;
}

export interface Gateway {
  /** The port it listens on. */
  port: number;
  stop(): Promise<void>;
}

/** What the handler read from the request before any await (uWS invalidates `req` afterwards). */
interface RequestHead {
  method: string;
  path: string;
  query: string;
  userId: string;
  tenant: string;
  contentLength: number | undefined;
  authorization: string;
  /** For event streams: where the client resumes. */
  lastEventId: string;
  /** The client's `X-Request-ID` ("" when absent). */
  requestId: string;
  /** `Connection: close`: the client wants the connection closed after the answer. */
  closesConnection: boolean;
}

function readHead(req: HttpRequest): RequestHead {
  const length = req.getHeader("content-length");
  void req.getHeader(API_KEY_HEADER); // accepted, not validated (docs/decisions.md, API keys are accepted, not checked)
  return {
    method: req.getCaseSensitiveMethod().toUpperCase(),
    path: req.getUrl(),
    query: req.getQuery() ?? "",
    userId: req.getHeader(USER_HEADER),
    tenant: req.getHeader(TENANT_HEADER),
    contentLength: length ? Number(length) : undefined,
    authorization: req.getHeader("authorization"),
    lastEventId: req.getHeader("last-event-id"),
    requestId: req.getHeader("x-request-id"),
    closesConnection: req.getHeader("connection").toLowerCase() === "close",
  };
}

/** Methods whose calls change state: carried out only once no pipelined request can abort them unanswered. */
const changesState = (method: string) => method !== "GET" && method !== "HEAD";

/** The query of every request to an endpoint that reads none: shared, as it is only ever encoded. */
const NO_QUERY: Readonly<Record<string, string>> = Object.freeze({});

/** The `declared` parameters of a query string (a repeated one keeps its last value); services never see others. */
function parseQuery(query: string, declared: readonly string[]): Readonly<Record<string, string>> {
  if (declared.length === 0 || query === "") return NO_QUERY;
  const out: Record<string, string> = {};
  for (const [k, v] of new URLSearchParams(query)) if (declared.includes(k)) out[k] = v;
  return out;
}

function parseJson(bytes: Buffer, kind: Route["body"]): unknown {
  if (bytes.length === 0 || bytes.toString("utf8").trim() === "") {
    if (kind === "json") throw new BadRequestError("a JSON request body is required");
    return undefined;
  }
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch (err) {
    throw new BadRequestError(`request body is not valid JSON: ${(err as Error).message}`);
  }
  const problem = bodyShapeProblem(value, MAX_JSON_DEPTH);
  if (problem) throw new BadRequestError(problem);
  return value;
}

/** Deepest nesting a body may have; encoders and validators recurse, so this keeps them off the stack limit. */
const MAX_JSON_DEPTH = 100;

/**
 * Refuses bodies nested deeper than `maxDepth` and object keys `__proto__` (msgpack decoders rename them, so
 * they could never be stored faithfully). Iterative, so a hostile body cannot overflow the stack here either.
 */
function bodyShapeProblem(root: unknown, maxDepth: number): string | undefined {
  const stack: Array<{ value: unknown; depth: number }> = [{ value: root, depth: 0 }];
  while (stack.length > 0) {
    const { value, depth } = stack.pop()!;
    if (value === null || typeof value !== "object") continue;
    if (depth >= maxDepth) return `request body is nested more than ${maxDepth} levels deep`;
    if (Array.isArray(value)) {
      for (const child of value) stack.push({ value: child, depth: depth + 1 });
      continue;
    }
    if (Object.hasOwn(value, "__proto__")) return "__proto__ is a reserved key and cannot be used as an object key";
    for (const child of Object.values(value)) stack.push({ value: child, depth: depth + 1 });
  }
  return undefined;
}

/** Seconds a client is asked to wait (`Retry-After`) while the gateway is not ready. */
const NOT_READY_RETRY_AFTER_S = 1;

/** What requests get until the tenant directory is ready (right after the first start): 503, not a wrong 401. */
function notReadyError(): UnavailableError {
  return new UnavailableError("the gateway is starting: the tenants are not loaded yet; retry shortly");
}

/** The caller checks, refusing with {@link notReadyError} until `directory` is ready (event streams use these too). */
function readyCallerCheck(check: CallerCheck, directory: TenantDirectory): CallerCheck {
  return {
    ...check,
    identify(head, auth) {
      return directory.ready() ? check.identify(head, auth) : Promise.reject(notReadyError());
    },
  };
}

/**
 * Refuses a body declared over `limit` once it is drained (http.ts BodyDrain), none of it stored or forwarded: the
 * BodyTooLargeError becomes the 413, after which the connection is closed.
 */
async function refuseDeclaredBody(res: HttpResponse, ex: Exchange, limit: number): Promise<never> {
  await dropBody(res, ex);
  throw new BodyTooLargeError(limit);
}

/** Starts the REST gateway: parse, authenticate, authorise, forward over NATS, map errors to statuses. */
export async function startGateway(deps: GatewayDeps): Promise<Gateway> {
  const { nc, log } = deps;
  const maxRequestBytes = deps.maxRequestBytes ?? 4 * 1024 * 1024;
  const requestTimeoutMs = deps.requestTimeoutMs ?? 15000;
  // A request must also fit in one NATS message (with room for the envelope).
  const maxBodyBytes = Math.min(maxRequestBytes, Math.max(0, (nc.info?.max_payload ?? 1048576) - 16384));
  const maxUploadBytes = deps.maxUploadBytes ?? 1024 * 1024 * 1024;
  const directory = await openTenantDirectory(nc, log);
  const uploads = await openUploadSink(nc);
  const routes = apiRoutes();
  const route = createRouter(routes);
  const auditLog = deps.audit === false ? undefined : openAuditLog({ nc, log: log.child({ part: "audit" }), metrics: deps.metrics });
  const audit = auditLog ? { audit: requestAudit(auditLog) } : {};
  const telemetry = createRequestTelemetry({ log, metrics: deps.metrics, routes, versionPrefix: `/${API_VERSION}`, ...audit });
  const gatewayAnswers = await openGatewayAnswers({ basePath: `/${API_VERSION}`, routes });
  const consoleRoutes = await openConsole();
  const guides = await openGuides(deps.docsDir ?? REPOSITORY_DOCS);
  const caller = readyCallerCheck(callerCheck(deps.security, directory), directory);
  const events = openEventStreams({ nc, log, caller, requestTimeoutMs, ...(deps.events ? { options: deps.events } : {}) });

  const handle = async (res: HttpResponse, head: RequestHead, ex: TracedExchange): Promise<void> => {
    // The API description and its docs need no identity, nor a token (docs/api.md, "API description and docs").
    if (gatewayAnswers.answerWithoutToken(head.method, head.path, ex)) return;
    // The console's page, script and style sheet hold nothing of a tenant: served without identity or token too.
    if (consoleRoutes.answer(head.method, head.path, ex)) return;
    // So are the guides (`/docs`, outside the versioned API): the project's own docs, read at start.
    const guide = head.method === "GET" || head.method === "HEAD" ? guides.answer(head.path) : undefined;
    if (guide) return ex.send(guide.status, guide.body, guide.headers);
    // Until the tenants are loaded no identity can be checked, and /status says so: 503 for every request from here.
    if (!directory.ready()) {
      const err = notReadyError();
      return ex.error(err.status, err.code, err.message, undefined, { "retry-after": String(NOT_READY_RETRY_AFTER_S) });
    }
    // With security on, every other request (even /status and unknown paths) needs a valid Bearer token first.
    const auth = await caller.authenticate(head.authorization);
    if (auth && !auth.ok) {
      const d = auth.denial;
      ex.error(d.status, d.code, d.message, d.details, d.headers);
      return;
    }
    const versionPrefix = `/${API_VERSION}`;
    let path: string;
    if (head.path === versionPrefix || head.path.startsWith(versionPrefix + "/")) {
      path = head.path.slice(versionPrefix.length) || "/";
    } else if (head.path === "/status" || head.path === "/status/") {
      path = "/status";
    } else {
      ex.error(404, "not_found", `no such path ${head.path}; API paths start with /${API_VERSION}`);
      return;
    }
    const misuse = events.misuse(head.method, path);
    if (misuse) return ex.error(misuse.status, misuse.code, misuse.message, undefined, misuse.headers);
    const streamedCluster = events.sseClusterId(head.method, path);
    if (streamedCluster !== undefined) {
      const identity = await caller.identify(head, auth);
      const request = { identity, clusterId: streamedCluster, lastEventId: head.lastEventId, authorization: head.authorization };
      return events.serveSse(res, ex, { ...request, since: new URLSearchParams(head.query).get("since") ?? undefined });
    }
    // HEAD is GET without the body (RFC 9110 9.3.2): routed as GET, answered without one (Exchange).
    const match = route(head.method === "HEAD" ? "GET" : head.method, path);
    if (match.kind === "not_found") {
      ex.error(404, "not_found", `no such path ${head.path}`);
      return;
    }
    if (match.kind === "method_not_allowed") {
      ex.error(405, "method_not_allowed", `${head.method} is not allowed on ${head.path}`, { allowed: match.allowed }, {
        allow: match.allowed.join(", "),
      });
      return;
    }
    if (match.kind === "bad_path") {
      ex.error(400, "bad_request", match.message);
      return;
    }
    const r = match.route;
    ex.trace.routed(r, match.params);
    if (r.access === "public") {
      gatewayAnswers.answer(r.endpoint, match.params, ex);
      return;
    }
    const identity = await caller.identify(head, auth);
    ex.trace.identified(identity);
    if (!isAllowed(identity.role, r.access)) {
      const need = r.access === "superadmin" ? "the superadmin" : "a tenant admin";
      const message = `${r.method} ${head.path} requires ${need}`;
      throw r.denialStatus === 403 ? new ForbiddenError(message) : new UnauthorizedError(message);
    }
    if (r.body === "upload") {
      if (head.contentLength !== undefined && head.contentLength > maxUploadBytes) return refuseDeclaredBody(res, ex, maxUploadBytes);
      const upload = await uploads.receive(res, ex, maxUploadBytes);
      if (!(await ex.awaitedAfterCurrentRead())) return void (await uploads.discard(upload.object));
      ex.pauseReads();
      const request = { identity, params: match.params, query: parseQuery(head.query, r.query), upload };
      // The service copies the bytes before answering: allow for that at a conservative 10 MB/s.
      const timeoutMs = requestTimeoutMs + Math.ceil(upload.size / 10_000);
      const value = await forwardRestCall(nc, r.endpoint, request, { timeoutMs, requestId: ex.trace.id }).catch(async (err: unknown) => {
        await uploads.discard(upload.object);
        throw err;
      });
      ex.json(200, value);
      return;
    }
    let body: unknown;
    if (r.body !== "none") {
      if (head.contentLength !== undefined && head.contentLength > maxBodyBytes) return refuseDeclaredBody(res, ex, maxBodyBytes);
      body = parseJson(await readBody(res, ex, maxBodyBytes), r.body);
    }
    if (ex.finished) return;
    if (changesState(head.method) && !(await ex.awaitedAfterCurrentRead())) return;
    ex.pauseReads();
    const request = { identity, params: match.params, query: parseQuery(head.query, r.query), body };
    const value = await forwardRestCall(nc, r.endpoint, request, { timeoutMs: requestTimeoutMs, requestId: ex.trace.id });
    ex.json(200, value);
  };

  const app = uWS.App().ws(`/${API_VERSION}${events.socketPath}`, events.socketBehavior).any("/*", (res, req) => {
    const head = readHead(req);
    const ex = new TracedExchange(res, head.method === "HEAD", telemetry.begin(head.method, head.path, head.requestId));
    if (head.closesConnection) ex.closeAfterAnswer();
    const framing = framingProblem(req);
    if (framing) return ex.refuseAfterCurrentRead(framing);
    handle(res, head, ex).catch((err: unknown) => {
      if (ex.finished) return;
      if (err instanceof BodyTooLargeError) {
        ex.error(413, "payload_too_large", `request body is larger than ${err.limit ?? maxBodyBytes} bytes`, undefined, {
          connection: "close",
        });
        return;
      }
      if (!(err instanceof CorralError) || err.status >= 500) log.warn("request failed", { path: head.path, requestId: ex.trace.id, err });
      ex.fail(err);
    });
  });

  const host = deps.host ?? "0.0.0.0";
  const socket = await new Promise<us_listen_socket>((resolve, reject) =>
    app.listen(host, deps.port ?? 55054, (s) =>
      s
        ? resolve(s)
        : reject(new Error(`cannot listen on ${host}:${deps.port}: is another program using the port? Give the gateway another one (server.port, e.g. CORRAL_SERVER_PORT=55080)`)),
    ),
  );
  const port = uWS.us_socket_local_port(socket);
  let stopping: Promise<void> | undefined;
  return {
    port,
    stop() {
      stopping ??= (async () => {
        uWS.us_listen_socket_close(socket);
        events.stop();
        directory.stop();
        await auditLog?.stop();
      })();
      return stopping;
    },
  };
}
