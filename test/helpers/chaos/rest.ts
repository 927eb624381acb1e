/**
 * REST calls of the chaos workload: one request to one gateway, telling an answer from no answer (refused, reset,
 * timed out, or a 5xx: the request may or may not have been carried out).
 */
import type { Caller } from "../api.js";

export type Outcome<T = any> = { answered: true; status: number; body: T; text: string } | { answered: false; why: string };

export const identityHeaders = (caller: Caller): Record<string, string> => ({
  ...(caller.user !== undefined ? { "Service-UserID": caller.user } : {}),
  ...(caller.tenant !== undefined ? { "Service-TenantID": caller.tenant } : {}),
});

export async function call<T = any>(baseUrl: string, caller: Caller, method: string, path: string, body?: unknown, timeoutMs = 20_000): Promise<Outcome<T>> {
  try {
    const res = await fetch(baseUrl + path, {
      method,
      headers: { ...identityHeaders(caller), ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    if (res.status >= 500) return { answered: false, why: `HTTP ${res.status} ${text.slice(0, 200)}` };
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = undefined;
    }
    return { answered: true, status: res.status, body: parsed as T, text };
  } catch (err) {
    return { answered: false, why: err instanceof Error ? `${err.name}: ${err.message}` : String(err) };
  }
}

/** Gateways taken in turn, so a dead one costs one failed call and the next goes elsewhere. */
export function gatewayRotation(baseUrls: readonly string[]): () => string {
  let next = 0;
  return () => baseUrls[next++ % baseUrls.length] ?? "";
}
