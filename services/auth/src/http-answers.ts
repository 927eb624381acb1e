import type { ServerResponse } from "node:http";

/** An answer other than 200 from the token server: status, JSON error code, message and extra headers. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

const JSON_HEADERS = {
  "Content-Type": "application/json;charset=UTF-8",
  "Cache-Control": "no-store",
  Pragma: "no-cache",
} as const;

/** A JSON answer (an empty body for `undefined`), never cached. */
export function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (res.headersSent || res.destroyed) return;
  const text = body === undefined ? "" : JSON.stringify(body);
  res.writeHead(status, { ...JSON_HEADERS, ...headers, "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

/** A redirect, never cached. */
export function redirect(res: ServerResponse, location: string, headers: Record<string, string | string[]> = {}): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(302, { Location: location, "Cache-Control": "no-store", Pragma: "no-cache", "Content-Length": 0, ...headers });
  res.end();
}

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** A small page telling a person in a browser what went wrong, with a way back. */
export function sendHtmlProblem(res: ServerResponse, status: number, message: string, back?: string): void {
  if (res.headersSent || res.destroyed) return;
  const link = back ? `<p><a href="${escapeHtml(back)}">Back to sign in</a></p>` : "";
  const page = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed</title></head><body><h1>Sign-in failed</h1><p>${escapeHtml(message)}</p>${link}</body></html>`;
  res.writeHead(status, {
    "Content-Type": "text/html; charset=utf-8",
    "Cache-Control": "no-store",
    "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
    "X-Content-Type-Options": "nosniff",
    "Content-Length": Buffer.byteLength(page),
  });
  res.end(page);
}
