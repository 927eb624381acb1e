/**
 * REST helpers for the plugin resource tests (test/api/plugins*.test.ts, test/e2e/plugins*.test.ts).
 *
 * Uploads go through `node:http` on a connection of their own (`agent: false`, `Connection: close`): the body can be
 * a stream (nothing held whole), and the gateway's upload path currently leaves a keep-alive connection unusable
 * for the next request (uWS `res.resume()` on a response that was never paused resets the socket).
 */
import { request } from "node:http";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ApiResponse, Caller } from "./api.js";
import { api } from "./api.js";

/** `POST {baseUrl}{path}` with raw bytes (a Buffer or a stream), as `caller`. */
export async function upload(
  baseUrl: string,
  caller: Caller,
  path: string,
  body: Uint8Array | string | Readable,
  options: { contentLength?: number } = {},
): Promise<ApiResponse> {
  // The path is sent as given (no dot-segment normalisation), so `..` and `%2E%2E` reach the server.
  const base = new URL(baseUrl);
  const headers: Record<string, string | number> = { connection: "close", "content-type": "application/octet-stream" };
  if (caller.user !== undefined) headers["Service-UserID"] = caller.user;
  if (caller.tenant !== undefined) headers["Service-TenantID"] = caller.tenant;
  if (typeof body === "string" || body instanceof Uint8Array) headers["content-length"] = Buffer.byteLength(body);
  else if (options.contentLength !== undefined) headers["content-length"] = options.contentLength;
  return new Promise<ApiResponse>((resolve, reject) => {
    const target = { hostname: base.hostname, port: base.port, path: base.pathname.replace(/\/$/, "") + path };
    const req = request({ ...target, method: "POST", headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("error", reject);
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let parsed: unknown;
        try {
          parsed = text ? JSON.parse(text) : undefined;
        } catch {
          parsed = undefined;
        }
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
        resolve({ status: res.statusCode ?? 0, headers: h, body: parsed, text });
      });
    });
    req.on("error", reject);
    if (typeof body === "string" || body instanceof Uint8Array) req.end(body);
    else pipeline(body, req).catch(reject);
  });
}

/** A REST client for one caller: `call(method, path)`, and `upload(path, body)`. */
export function pluginClient(baseUrl: string, caller: Caller) {
  return {
    call: (method: string, path: string) => api(baseUrl, method, path, caller),
    upload: (path: string, body: Uint8Array | string | Readable, options?: { contentLength?: number }) =>
      upload(baseUrl, caller, path, body, options),
  };
}

/**
 * A deterministic pseudo-random byte stream of `size` bytes in 64 KiB pieces, generated as it is read (never held
 * whole); `seed` picks the bytes, so the expected SHA-256 can be computed the same way.
 */
export function byteStream(size: number, seed = 1): Readable {
  let sent = 0;
  let state = seed >>> 0 || 1;
  return new Readable({
    read() {
      if (sent >= size) {
        this.push(null);
        return;
      }
      const n = Math.min(64 * 1024, size - sent);
      const chunk = Buffer.allocUnsafe(n);
      const word = Buffer.allocUnsafe(4);
      for (let i = 0; i < n; i += 4) {
        state ^= state << 13;
        state ^= state >>> 17;
        state ^= state << 5;
        state >>>= 0;
        word.writeUInt32LE(state, 0);
        word.copy(chunk, i, 0, Math.min(4, n - i));
      }
      sent += n;
      this.push(chunk);
    },
  });
}
