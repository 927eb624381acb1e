import type { HttpRequest } from "uWebSockets.js";
import { BadRequestError, CorralError } from "@corral/contracts";

/** 501: the request uses an HTTP feature the gateway does not implement (RFC 9112 6.1: a transfer coding). */
export class NotImplementedError extends CorralError {
  constructor(message: string) {
    super(501, "not_implemented", message);
  }
}

/**
 * Why the body framing of a request that reached the handler cannot be trusted, or `undefined`.
 *
 * uWebSockets.js frames the body by the first `Content-Length` and decodes any `Transfer-Encoding` as chunked,
 * whatever it names; a proxy in front may pick another header or coding and so see other request boundaries
 * (request smuggling). RFC 9112 6.3: such a request is refused and the connection closed.
 */
export function framingProblem(req: HttpRequest): CorralError | undefined {
  const lengths = new Set<string>();
  const codings: string[] = [];
  req.forEach((key, value) => {
    if (key === "content-length") lengths.add(value.trim());
    else if (key === "transfer-encoding") codings.push(...value.split(",").map((c) => c.trim().toLowerCase()));
  });
  // Identical repeated values frame the body the same way everywhere (RFC 9112 6.3 allows accepting them).
  if (lengths.size > 1) return new BadRequestError(`conflicting Content-Length headers: ${[...lengths].join(", ")}`);
  if (codings.length === 0 || (codings.length === 1 && codings[0] === "chunked")) return undefined;
  const before = codings.slice(0, -1);
  if (codings.at(-1) !== "chunked" || before.includes("chunked")) {
    return new BadRequestError("Transfer-Encoding must name chunked once, as the last coding");
  }
  return new NotImplementedError(`only the chunked transfer coding is supported, not ${before.join(", ")}`);
}
