import { randomUUID } from "node:crypto";

/** The header that carries a request's id: from the client (optional), back to it, and on the NATS request. */
export const REQUEST_ID_HEADER = "X-Request-ID";

/** A client's id is taken when it is 1 to 128 of these characters (it goes into log lines and a NATS header). */
const VALID_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

/** The client's request id when it is usable, else a new one. */
export function requestIdOf(given: string | undefined): string {
  return given !== undefined && VALID_REQUEST_ID.test(given) ? given : randomUUID();
}
