import { promisify } from "node:util";
import { deflateRaw, inflateRaw } from "node:zlib";
import type { Msg, MsgHdrs } from "@nats-io/transport-node";

/**
 * Service requests and replies larger than one NATS message (`max_payload`, 8 MiB in Corral's servers) travel
 * deflated, marked by a header: the plan of a 10,000-node cluster is about 10 MB of msgpack, most of it the same keys
 * and names again, and deflates to a small part of that. Smaller messages go as they are, so the common path costs
 * nothing; deflating and inflating run on libuv's thread pool, off the event loop.
 */
const ENCODING_HEADER = "Corral-Encoding";
const DEFLATE_RAW = "deflate-raw";

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** `data` deflated, with `headers` (the message's) marked so. */
export async function deflateMessage(data: Uint8Array, headers: MsgHdrs): Promise<Uint8Array> {
  const deflated = await deflate(data, { level: 1 });
  headers.set(ENCODING_HEADER, DEFLATE_RAW);
  return deflated;
}

/** Whether a message's data was deflated by `deflateMessage`. */
export const isDeflated = (msg: Pick<Msg, "headers">): boolean => msg.headers?.get(ENCODING_HEADER) === DEFLATE_RAW;

/** The data of a message `deflateMessage` deflated, as it was. */
export async function inflateMessage(data: Uint8Array): Promise<Uint8Array> {
  return inflate(data);
}
