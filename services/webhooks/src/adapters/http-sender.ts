import { lookup as dnsLookup, type LookupAddress } from "node:dns";
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import { isIP, type LookupFunction } from "node:net";
import type { AddressPolicy } from "../domain/address-policy.js";

/** How one attempt ended: `status` is the answer's (absent: none came), `error` why it failed. */
export interface AttemptOutcome {
  ok: boolean;
  status?: number;
  error?: string;
  durationMs: number;
}

export interface Sender {
  post(url: string, headers: Record<string, string>, body: string): Promise<AttemptOutcome>;
}

/** Resolves a host name to every address it has (`dns.lookup` by default; tests give names of their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) => dnsLookup(hostname, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))));

/** Bytes of an answer read at most (the status is what counts; the rest is drained and dropped). */
const MAX_ANSWER_BYTES = 64 * 1024;

class RefusedAddress extends Error {}

/**
 * POSTs deliveries. The host is resolved at each attempt and every address it has is checked against the policy
 * before connecting, to the address checked (so a name cannot change between the check and the connection);
 * redirects are not followed (a 3xx is a failure); an attempt takes at most `timeoutMs`.
 */
export function httpSender(options: { policy: AddressPolicy; timeoutMs: number; resolve?: Resolver; userAgent?: string }): Sender {
  const { policy, timeoutMs } = options;
  const resolve = options.resolve ?? systemResolver;
  const checkedLookup: LookupFunction = (hostname, lookupOptions, callback) => {
    resolve(hostname).then(
      (addresses) => {
        if (addresses.length === 0) return callback(new Error(`${hostname} has no address`), "", 0);
        for (const a of addresses) {
          const refusal = policy.refusalOf(a.address);
          if (refusal !== undefined) return callback(new RefusedAddress(`${hostname} resolves to ${refusal} (${a.address}), which webhooks may not reach`), "", 0);
        }
        if ((lookupOptions as { all?: boolean }).all) return (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, addresses);
        const first = addresses[0]!;
        callback(null, first.address, first.family);
      },
      (err: Error) => callback(err as NodeJS.ErrnoException, "", 0),
    );
  };
  return {
    post(url, headers, body) {
      const started = performance.now();
      const elapsed = () => Math.round(performance.now() - started);
      return new Promise<AttemptOutcome>((settle) => {
        let target: URL;
        try {
          target = new URL(url);
        } catch {
          return settle({ ok: false, error: "the URL does not parse", durationMs: 0 });
        }
        const host = target.hostname.replace(/^\[|\]$/g, "");
        if (isIP(host) !== 0) {
          const refusal = policy.refusalOf(host);
          if (refusal !== undefined) return settle({ ok: false, error: `${host} is ${refusal}, which webhooks may not reach`, durationMs: 0 });
        }
        const requestOptions: RequestOptions = {
          method: "POST",
          headers: {
            ...headers,
            "content-type": "application/json",
            "content-length": String(Buffer.byteLength(body)),
            "user-agent": options.userAgent ?? "Corral-Webhooks/1",
          },
          lookup: checkedLookup,
          timeout: timeoutMs,
          agent: false,
        };
        const send = target.protocol === "https:" ? httpsRequest : httpRequest;
        let done = false;
        const finish = (outcome: Omit<AttemptOutcome, "durationMs">) => {
          if (done) return;
          done = true;
          clearTimeout(deadline);
          settle({ ...outcome, durationMs: elapsed() });
        };
        const req = send(target, requestOptions, (res) => {
          const status = res.statusCode ?? 0;
          let read = 0;
          res.on("data", (chunk: Buffer) => {
            read += chunk.length;
            if (read > MAX_ANSWER_BYTES) res.destroy();
          });
          const ok = status >= 200 && status < 300;
          const outcome = ok ? { ok, status } : { ok, status, error: status >= 300 && status < 400 ? `answered ${status} (redirects are not followed)` : `answered ${status}` };
          res.on("end", () => finish(outcome));
          res.on("close", () => finish(outcome));
          res.on("error", () => finish(outcome));
        });
        // The whole attempt, answer included, is bounded (the socket timeout alone is per idle period).
        const deadline = setTimeout(() => {
          req.destroy(new Error(`no answer within ${timeoutMs} ms`));
        }, timeoutMs);
        req.on("timeout", () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
        req.on("error", (err) => finish({ ok: false, error: err.message }));
        req.end(body);
      });
    },
  };
}
