import type { HttpResponse } from "uWebSockets.js";
import {
  LabeledHistogram,
  requestIdOf,
  seriesByStatus,
  type HistogramSeries,
  type Logger,
  type MetricsRegistry,
} from "@corral/shared";
import type { Identity } from "@corral/contracts";
import { answeredIdOf, type RequestAudit } from "./audit/request-audit.js";
import { Exchange } from "./http.js";
import { createRouter } from "./router.js";
import type { Route } from "./routes.js";

/**
 * What the gateway records of each request: a latency histogram by route template (never the raw path, so label
 * values stay bounded) and answered status, and one `info` log line with route, status, duration and the request
 * id, which is also answered in `X-Request-ID` and sent on to the service that serves the request.
 */
export interface RequestTelemetry {
  /** Starts timing a request; `givenId` is the client's `X-Request-ID` header (used when valid). */
  begin(method: string, path: string, givenId: string): RequestTrace;
}

export interface RequestTrace {
  /** The request's id. */
  readonly id: string;
  /** The route the request matched: its labels. Unset, the route is looked up when the answer goes out. */
  routed(route: Route, params?: Readonly<Record<string, string>>): void;
  /** Who calls, once established (for the audit log). */
  identified(identity: Identity): void;
  /** The JSON answer about to go out (the audit log keeps the id it names, never the answer). */
  answered(value: unknown): void;
  /** Whether an answer with `status` is audited: then `finished` is given the client's address. */
  audits(status: number): boolean;
  /** The answer went out with `status` (499: the client went away first). Only the first call counts. */
  finished(status: number, source?: string): void;
  /** The answer is an event stream, now started (route `event-stream`, status 200; its duration: until it started). */
  streaming(): void;
}

export interface RequestTelemetryOptions {
  log: Logger;
  /** Where the latency histogram goes (`corral_http_request_duration_seconds`); none: not counted. */
  metrics?: MetricsRegistry;
  /** Every route, for requests answered before they were routed (a token refused first, say). */
  routes: readonly Route[];
  /** The version segment API paths start with (`/v2`). */
  versionPrefix: string;
  /** Records changes and refusals in the audit log; none: nothing is recorded. */
  audit?: RequestAudit;
}

/** Status recorded for a request whose client went away before the answer (nginx's "client closed request"). */
export const CLIENT_CLOSED = 499;

/** Seconds, from a cached read (well under a millisecond) to the 15 s service timeout. */
const HTTP_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

interface RouteSeries {
  /** The route's endpoint; none for `unmatched` and `event-stream`. */
  endpoint?: string;
  method: string;
  route: string;
  byStatus: (status: number) => HistogramSeries;
}

export function createRequestTelemetry(options: RequestTelemetryOptions): RequestTelemetry {
  const { log } = options;
  const histogram = new LabeledHistogram(options.metrics, {
    name: "corral_http_request_duration_seconds",
    help: "REST requests by method, route template and answered status (499: the client went away), with their latency",
    labelNames: ["method", "route", "status"],
    buckets: HTTP_BUCKETS,
  });
  const seriesOf = (method: string, route: string): RouteSeries => ({ method, route, byStatus: seriesByStatus(histogram, { method, route }) });
  const byRoute = new Map<Route, RouteSeries>(options.routes.map((r) => [r, { ...seriesOf(r.method, r.pattern), endpoint: r.endpoint }]));
  const unmatched = seriesOf("other", "unmatched");
  const eventStreams = seriesOf("GET", "event-stream");
  const route = createRouter([...options.routes]);
  const { versionPrefix, audit } = options;
  const NO_PARAMS: Readonly<Record<string, string>> = Object.freeze({});
  /** The route of a request that was answered before routing (rare: errors only). */
  const lookUp = (method: string, path: string): RouteSeries => {
    // Outside the version segment only `/status` is a route (the console and the guides are not routes of the table).
    const inVersion = path === versionPrefix || path.startsWith(versionPrefix + "/") ? path.slice(versionPrefix.length) || "/" : path === "/status" || path === "/status/" ? "/status" : undefined;
    if (inVersion === undefined) return unmatched;
    const match = route(method === "HEAD" ? "GET" : method, inVersion);
    return (match.kind === "found" && byRoute.get(match.route)) || unmatched;
  };

  return {
    begin(method, path, givenId) {
      const started = performance.now();
      const id = requestIdOf(givenId);
      let series: RouteSeries | undefined;
      let done = false;
      let params = NO_PARAMS;
      let identity: Identity | undefined;
      let answeredId: string | undefined;
      return {
        id,
        routed(r, routeParams) {
          series = byRoute.get(r);
          if (routeParams) params = routeParams;
        },
        identified(who) {
          identity = who;
        },
        answered(value) {
          if (audit && method === "POST") answeredId = answeredIdOf(value);
        },
        audits: (status) => audit !== undefined && audit.wants(method, status),
        finished(status, source = "") {
          if (done) return;
          done = true;
          const seconds = (performance.now() - started) / 1000;
          series ??= lookUp(method, path);
          series.byStatus(status).observe(seconds);
          log.info("request", { requestId: id, method, route: series.route, path, status, ms: Math.round(seconds * 1e6) / 1000 });
          if (audit?.wants(method, status) && series !== eventStreams) {
            const { route, endpoint } = series;
            audit.record({ method, route, ...(endpoint ? { endpoint } : {}), params, ...(identity ? { identity } : {}), ...(answeredId ? { answeredId } : {}), status, requestId: id, source });
          }
        },
        streaming() {
          series = eventStreams;
          this.finished(200);
        },
      };
    },
  };
}

/** An exchange that answers the request id in `X-Request-ID` and reports its end to the trace. */
export class TracedExchange extends Exchange {
  constructor(
    private readonly response: HttpResponse,
    isHead: boolean,
    readonly trace: RequestTrace,
  ) {
    super(response, isHead);
    this.onAbort(() => trace.finished(CLIENT_CLOSED));
  }

  override send(status: number, body: Buffer | undefined, headers: Record<string, string> = {}): void {
    if (this.finished) return;
    // Read before the answer: uWS discards the response once it is sent.
    const source = this.trace.audits(status) ? Buffer.from(this.response.getRemoteAddressAsText()).toString() : undefined;
    super.send(status, body, { ...headers, "x-request-id": this.trace.id });
    this.trace.finished(status, source);
  }

  override json(status: number, value: unknown, headers: Record<string, string> = {}): void {
    this.trace.answered(value);
    super.json(status, value, headers);
  }

  override markStreaming(): void {
    super.markStreaming();
    this.trace.streaming();
  }
}
