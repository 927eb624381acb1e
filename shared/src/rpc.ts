import { headers as natsHeaders, type Msg, type MsgHdrs, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import {
  decode,
  encode,
  CorralError,
  UnavailableError,
  fromWireError,
  toWireError,
  type WireError,
} from "@corral/contracts";
import { deflateMessage, inflateMessage, isDeflated } from "./deflated-messages.js";
import type { Logger } from "./log.js";
import type { MetricsRegistry } from "./metrics/registry.js";
import { REQUEST_ID_HEADER } from "./metrics/request-id.js";
import { LabeledHistogram, oncePerRegistry, seriesByStatus } from "./metrics/series.js";
import { muxedRequests } from "./muxed-requests.js";

type Reply = { value?: unknown } | { error: WireError };

/** Handles one decoded request; throw a CorralError to answer with an error. */
export type Handler = (request: never) => Promise<unknown> | unknown;

export interface ServeOptions {
  nc: NatsConnection;
  /** Queue group shared by all instances of the service. */
  queue: string;
  log: Logger;
  handlers: Record<string, Handler>;
  /** Name of each subject's endpoint in metrics and logs. @default the subject */
  endpointNames?: Readonly<Record<string, string>>;
  /** Where request durations are counted (`corral_rpc_request_duration_seconds`). @default not counted */
  metrics?: MetricsRegistry;
}

/** Seconds, from well under a millisecond (a cached read) to the gateway's 15 s timeout. */
const RPC_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15];

const rpcDurations = oncePerRegistry(
  (registry) =>
    new LabeledHistogram(registry, {
      name: "corral_rpc_request_duration_seconds",
      help: "Time to answer a NATS request, by endpoint and answered status (200, or the error's status)",
      labelNames: ["endpoint", "status"],
      buckets: RPC_BUCKETS,
    }),
);

export interface Served {
  /** Stops taking requests and waits for in-flight ones. Idempotent. */
  stop(): Promise<void>;
}

/**
 * Whether `msg` was published on the served subject. A JetStream push consumer delivers stored messages to its
 * deliver subject under their own subjects, and nats-server does not check that the consumer's creator may publish
 * to that deliver subject (nats-io/nats-server#8274): a user allowed to write some stream and create consumers
 * (a provisioner) could otherwise send a service requests of its making. No stream that such a user may write has
 * a service subject, so those deliveries are told apart by their subject.
 */
function isRequestOn(served: string, msg: Msg): boolean {
  if (msg.subject === served) return true;
  const want = served.split(".");
  const got = msg.subject.split(".");
  for (let i = 0; i < want.length; i++) {
    if (want[i] === ">") return got.length > i;
    if (want[i] !== "*" && want[i] !== got[i]) return false;
  }
  return got.length === want.length;
}

/**
 * Binds each subject to its handler in a queue group: decode -> handler -> reply `{value}` or `{error}`.
 * Unknown errors are logged with their cause and answered as 500 `internal`. A request that carries an
 * `X-Request-ID` header (the gateway's) is logged at info with its id, status and duration.
 */
export function serve(options: ServeOptions): Served {
  const { nc, queue, log, handlers } = options;
  const inFlight = new Set<Promise<void>>();
  const subs: Subscription[] = [];
  const durations = rpcDurations(options.metrics);
  const handle = async (subject: string, handler: Handler, msg: Msg, endpoint: Endpoint): Promise<void> => {
    const started = performance.now();
    const requestId = msg.headers?.get(REQUEST_ID_HEADER) || undefined;
    let reply: Reply;
    let status = 200;
    try {
      const request = msg.data.length === 0 ? undefined : decode(isDeflated(msg) ? await inflateMessage(msg.data) : msg.data);
      reply = { value: await (handler as (r: unknown) => unknown)(request) };
    } catch (err) {
      const wire = toWireError(err);
      status = wire.status;
      if (wire.status >= 500) log.error("handler failed", { subject, requestId, err });
      reply = { error: wire };
    }
    const seconds = (performance.now() - started) / 1000;
    endpoint.durations(status).observe(seconds);
    if (requestId !== undefined) log.info("served", { endpoint: endpoint.name, requestId, status, ms: Math.round(seconds * 1e6) / 1000 });
    if (!msg.reply) return;
    let bytes = encode(reply);
    const limit = nc.info?.max_payload ?? Infinity;
    if (bytes.length <= limit) {
      msg.respond(bytes);
      return;
    }
    const headers = natsHeaders();
    const deflated = await deflateMessage(bytes, headers);
    if (deflated.length <= limit) {
      msg.respond(deflated, { headers });
      return;
    }
    bytes = encode({
      error: {
        status: 413,
        code: "reply_too_large",
        message: `the answer (${bytes.length} bytes, ${deflated.length} deflated) is larger than one NATS message (${limit} bytes)`,
      },
    });
    msg.respond(bytes);
  };
  for (const [subject, handler] of Object.entries(handlers)) {
    const name = options.endpointNames?.[subject] ?? subject;
    const endpoint: Endpoint = { name, durations: seriesByStatus(durations, { endpoint: name }) };
    subs.push(
      nc.subscribe(subject, {
        queue,
        callback: (err, msg) => {
          if (err) {
            log.error("subscription error", { subject, err });
            return;
          }
          if (!isRequestOn(subject, msg)) {
            log.warn("dropped a message delivered under another subject (a JetStream push consumer aimed at a service?)", {
              subject,
              delivered: msg.subject,
            });
            return;
          }
          const p = handle(subject, handler, msg, endpoint).finally(() => inFlight.delete(p));
          inFlight.add(p);
        },
      }),
    );
  }
  let stopping: Promise<void> | undefined;
  return {
    stop() {
      stopping ??= (async () => {
        await Promise.all(subs.map((s) => s.drain().catch(() => {})));
        await Promise.allSettled([...inFlight]);
      })();
      return stopping;
    },
  };
}

/** A served endpoint's name and its duration series per status. */
interface Endpoint {
  name: string;
  durations: ReturnType<typeof seriesByStatus>;
}

export interface CallOptions {
  /** @default 15000 */
  timeoutMs?: number;
  /** Sent as the `X-Request-ID` header: the serving service logs the request under it. */
  requestId?: string;
}

/**
 * Sends a request to a service and returns its value, or throws the service's CorralError.
 * No responder is a 503; no answer in time is a 504. A request or reply larger than one NATS message goes deflated.
 */
export async function call<T = unknown>(
  nc: NatsConnection,
  subject: string,
  request: unknown,
  options: CallOptions = {},
): Promise<T> {
  let data = encode(request);
  let headers: MsgHdrs | undefined;
  if (options.requestId !== undefined) (headers ??= natsHeaders()).set(REQUEST_ID_HEADER, options.requestId);
  if (data.length > (nc.info?.max_payload ?? Infinity)) data = await deflateMessage(data, (headers ??= natsHeaders()));
  const msg = await muxedRequests(nc).request(subject, data, {
    timeoutMs: options.timeoutMs ?? 15000,
    timeoutError: () => new CorralError(504, "timeout", `service did not answer ${subject} in time`),
    ...(headers ? { headers } : {}),
  });
  // A status without data: nats-server found no subscriber (503).
  if (msg.data.length === 0 && msg.headers?.code === 503) throw new UnavailableError(`no service answers ${subject}`);
  const reply = decode<Reply>(isDeflated(msg) ? await inflateMessage(msg.data) : msg.data);
  if (reply && typeof reply === "object" && "error" in reply) throw fromWireError(reply.error);
  return (reply as { value?: unknown })?.value as T;
}
