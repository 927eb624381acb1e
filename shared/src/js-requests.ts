import { headers as newHeaders, type Msg, type MsgHdrs, type NatsConnection } from "@nats-io/transport-node";
import { UnavailableError } from "@corral/contracts";
import { muxedRequests } from "./muxed-requests.js";
import { perConnection } from "./nats.js";
import { natsServerCount } from "./replicas.js";

/**
 * The JetStream requests of the hot paths (acknowledged publishes, compare-and-set writes, direct gets), over
 * the connection's muxed requests (muxed-requests.ts: no request object, timer or Error per request).
 */
export interface JsRequests {
  /** Publishes to a stream and waits for its acknowledgement; the stream's sequence of the message. */
  publish(subject: string, data: Uint8Array, options?: JsPublishOptions): Promise<number>;
  /** The last message on `subject` in `stream` (direct get; the leader's on a NATS cluster), or `undefined` when there is none. */
  lastBySubject(stream: string, subject: string): Promise<StoredMsg | undefined>;
  /**
   * The first message on `subject` (wildcards allowed) in `stream` at sequence `fromSeq` or later (direct get), or
   * `undefined` when there is none. Costs the server the same whatever the stream holds, even past its end.
   */
  nextBySubject(stream: string, subject: string, fromSeq: number): Promise<StoredMsg | undefined>;
}

export interface JsPublishOptions {
  /** Deduplication id (`Nats-Msg-Id`). */
  msgId?: string;
  /** Compare-and-set: the subject's last sequence must be this (0: the subject has no message). */
  expectLastSubjectSequence?: number;
}

export interface StoredMsg {
  seq: number;
  data: Uint8Array;
  header(name: string): string | undefined;
}

/** A JetStream API error (`code` is JetStream's err_code, e.g. 10071 for a lost compare-and-set). */
export class JsApiError extends Error {
  constructor(
    message: string,
    readonly code: number,
    readonly status: number,
  ) {
    super(message);
    this.name = "JsApiError";
  }
}

const TIMEOUT_MS = 5_000;
const utf8Decoder = new TextDecoder();
const utf8Encoder = new TextEncoder();
const timeoutError = () => new UnavailableError(`JetStream did not answer within ${TIMEOUT_MS / 1000} s; try again`);

/** The headers of a stored message (`NATS/1.0\r\nName: value\r\n...`), names lower-cased. */
function parseHeaderBlock(block: string): Map<string, string> {
  const headers = new Map<string, string>();
  for (const line of block.split("\r\n").slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.set(line.slice(0, colon).trim().toLowerCase(), line.slice(colon + 1).trim());
  }
  return headers;
}

/** The connection's requester (one per connection, made on first use). */
export const jsRequests = perConnection(createJsRequests);

function createJsRequests(nc: NatsConnection): JsRequests {
  const requests = muxedRequests(nc);
  const request = (subject: string, data: Uint8Array, headers?: MsgHdrs) =>
    requests.request(subject, data, { timeoutMs: TIMEOUT_MS, timeoutError, ...(headers ? { headers } : {}) });

  /** A status reply: 503 is "no responders" (no stream or JetStream down), a 503 to our callers too. */
  const statusError = (msg: Msg, what: string): Error | undefined => {
    const h = msg.headers;
    if (!h || !h.hasError) return undefined;
    if (h.code === 503) return new UnavailableError(`JetStream is not available (${what}: no responders); try again`);
    return new JsApiError(`${what}: ${h.code} ${h.description}`, 0, h.code);
  };

  const directGet = async (stream: string, query: object, subject: string): Promise<StoredMsg | undefined> => {
    const reply = await request(`$JS.API.DIRECT.GET.${stream}`, utf8Encoder.encode(JSON.stringify(query)));
    const h = reply.headers;
    if (h?.hasError) {
      if (h.code === 404) return undefined;
      throw statusError(reply, `direct get of ${subject}`) ?? new Error(`direct get of ${subject} failed`);
    }
    const seq = Number(h?.get("Nats-Sequence"));
    if (!h || !Number.isFinite(seq)) throw new Error(`direct get of ${subject}: reply without a sequence`);
    return { seq, data: reply.data, header: (name) => h.get(name) || undefined };
  };

  /**
   * The stream leader's answer (`STREAM.MSG.GET`): on a NATS cluster every replica answers a direct get, and a
   * follower that has not applied the latest write yet answers what was there before, so a process would not read
   * its own writes (the chaos suite saw a task built from a cluster record older than the job that planned it).
   */
  const leaderGet = async (stream: string, query: object, subject: string): Promise<StoredMsg | undefined> => {
    const reply = await request(`$JS.API.STREAM.MSG.GET.${stream}`, utf8Encoder.encode(JSON.stringify(query)));
    const failed = statusError(reply, `get of ${subject}`);
    if (failed) throw failed;
    const answer = JSON.parse(utf8Decoder.decode(reply.data)) as {
      message?: { seq: number; data?: string; hdrs?: string };
      error?: { code: number; err_code: number; description: string };
    };
    if (answer.error) {
      if (answer.error.code === 404) return undefined;
      throw new JsApiError(`get of ${subject}: ${answer.error.description}`, answer.error.err_code, answer.error.code);
    }
    if (!answer.message || typeof answer.message.seq !== "number") throw new Error(`get of ${subject}: reply without a message`);
    const headers = parseHeaderBlock(answer.message.hdrs ? Buffer.from(answer.message.hdrs, "base64").toString("utf8") : "");
    return { seq: answer.message.seq, data: Buffer.from(answer.message.data ?? "", "base64"), header: (name) => headers.get(name.toLowerCase()) };
  };

  /** Direct gets on a lone server (cheap, never stale there); the leader's answer on a cluster. */
  const get = (stream: string, query: object, subject: string) =>
    (natsServerCount(nc) > 1 ? leaderGet : directGet)(stream, query, subject);

  return {
    async publish(subject, data, options = {}) {
      let hdrs: ReturnType<typeof newHeaders> | undefined;
      if (options.msgId !== undefined || options.expectLastSubjectSequence !== undefined) {
        hdrs = newHeaders();
        if (options.msgId !== undefined) hdrs.set("Nats-Msg-Id", options.msgId);
        if (options.expectLastSubjectSequence !== undefined) {
          hdrs.set("Nats-Expected-Last-Subject-Sequence", String(options.expectLastSubjectSequence));
        }
      }
      const reply = await request(subject, data, hdrs);
      const failed = statusError(reply, `publish to ${subject}`);
      if (failed) throw failed;
      const ack = JSON.parse(utf8Decoder.decode(reply.data)) as {
        seq?: number;
        error?: { code: number; err_code: number; description: string };
      };
      if (ack.error) throw new JsApiError(ack.error.description, ack.error.err_code, ack.error.code);
      if (typeof ack.seq !== "number") throw new Error(`publish to ${subject}: unexpected acknowledgement`);
      return ack.seq;
    },

    lastBySubject: (stream, subject) => get(stream, { last_by_subj: subject }, subject),
    nextBySubject: (stream, subject, fromSeq) => get(stream, { seq: fromSeq, next_by_subj: subject }, subject),
  };
}
