/** Assertions shared by the API tests. */
import type { ExecutionContext } from "ava";
import type { ApiResponse } from "./api.js";

/** A one-line rendering of a response for assertion messages. */
export function show(res: ApiResponse): string {
  const text = res.text.length > 300 ? `${res.text.slice(0, 300)}...` : res.text;
  return `HTTP ${res.status} ${text}`;
}

/**
 * Asserts the JSON error answer (docs/decisions.md, Errors are JSON): HTTP `status` (or any 4xx for `"4xx"`), a JSON
 * content type, and a body `{status, error, message}` whose `status` equals the HTTP status. `what` names the request.
 * Returns whether everything held, so table-driven tests can stop early.
 */
export function assertError(t: ExecutionContext, res: ApiResponse, status: number | "4xx", what: string): boolean {
  const ctx = `${what}: ${show(res)}`;
  const statusOk = status === "4xx" ? res.status >= 400 && res.status < 500 : res.status === status;
  const body = res.body as { status?: unknown; error?: unknown; message?: unknown } | undefined;
  const checks = [
    t.true(statusOk, `expected ${status} for ${ctx}`),
    t.regex(res.headers.get("content-type") ?? "", /^application\/json/, `JSON content type for ${ctx}`),
    t.true(typeof body === "object" && body !== null && !Array.isArray(body), `JSON object body for ${ctx}`),
    t.is(body?.status, res.status, `body.status equals the HTTP status for ${ctx}`),
    t.true(typeof body?.error === "string" && body.error.length > 0, `body.error is a code for ${ctx}`),
    t.true(typeof body?.message === "string" && body.message.length > 0, `body.message is a text for ${ctx}`),
  ];
  return checks.every(Boolean);
}

/** Asserts a 200 answer, showing the response when it is not. */
export function assertOk(t: ExecutionContext, res: ApiResponse, what: string): boolean {
  return t.is(res.status, 200, `${what}: ${show(res)}`);
}
