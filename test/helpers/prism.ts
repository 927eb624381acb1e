/**
 * Stoplight Prism (`@stoplight/prism-cli`) in proxy mode in front of a running gateway: an OpenAPI validator
 * written by others, so the API description is checked by something that does not share our reading of it. Every
 * request sent to the proxy is forwarded to the gateway unchanged; Prism checks the request and the answer against
 * the document and lists what it does not describe in the answer's `sl-violations` header.
 *
 * Prism runs without `--errors`: with it, a request the document refuses is answered by Prism itself (422) and
 * never reaches the gateway, so the gateway's own refusal could not be checked. The header carries the same
 * findings either way.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";

/** One finding of Prism: where (`request` or `response`, then the part), how bad, and what. */
export interface PrismViolation {
  location: string[];
  severity: string;
  code?: string | number;
  message: string;
}

export interface PrismProxy {
  /** Where the proxy listens: paths are the document's (without the server's `/v2`). */
  url: string;
  /** Prism's last lines of output, for diagnostics. */
  output(): string[];
  stop(): Promise<void>;
}

export interface PrismProxyOptions {
  /** The OpenAPI document: a file path or a URL (the gateway's `/v2/openapi.json`). */
  document: string;
  /** The gateway's base URL, version segment included (`http://127.0.0.1:PORT/v2`). */
  upstream: string;
  /** @default 60_000 ms (Prism reads and compiles the whole document before it listens) */
  startTimeoutMs?: number;
}

const require = createRequire(import.meta.url);

/** The CLI's entry, as its package names it. */
function prismCli(): string {
  const manifest = require.resolve("@stoplight/prism-cli/package.json");
  const { bin } = JSON.parse(readFileSync(manifest, "utf8")) as { bin: string | Record<string, string> };
  return join(dirname(manifest), typeof bin === "string" ? bin : (bin["prism"] ?? ""));
}

const ANSI = /\u001b\[[0-9;]*m/g;
const LISTENING = /Prism is listening on (http:\/\/\S+)/;

/** Starts `prism proxy <document> <upstream>` on a free loopback port and waits until it listens. */
export async function startPrismProxy(options: PrismProxyOptions): Promise<PrismProxy> {
  const args = [prismCli(), "proxy", options.document, options.upstream, "--host", "127.0.0.1", "--port", "0"];
  const child = spawn(process.execPath, args, { env: { ...process.env, FORCE_COLOR: "0", NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] });
  const lines: string[] = [];
  let listening: (url: string) => void = () => {};
  const url = new Promise<string>((resolve) => (listening = resolve));
  for (const stream of [child.stdout, child.stderr]) {
    // Always read to the end: a full pipe would stall Prism, which logs every request.
    createInterface({ input: stream }).on("line", (raw) => {
      const line = raw.replace(ANSI, "");
      lines.push(line);
      if (lines.length > 300) lines.shift();
      const match = LISTENING.exec(line);
      if (match) listening(match[1]!);
    });
  }
  const exited = new Promise<string>((resolve) => child.once("exit", (code, signal) => resolve(`exited (${signal ?? `code ${code}`})`)));
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<string>((resolve) => (timer = setTimeout(() => resolve(`did not listen within ${timeoutMs} ms`), timeoutMs)));
  const outcome = await Promise.race([url.then((u) => ({ url: u })), exited.then((why) => ({ why })), timedOut.then((why) => ({ why }))]);
  clearTimeout(timer);
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
    await exited;
  };
  if ("why" in outcome) {
    await stop();
    throw new Error(`prism proxy ${outcome.why}:\n${lines.slice(-30).join("\n")}`);
  }
  return { url: outcome.url.replace(/\/$/, ""), output: () => [...lines], stop };
}

/** The findings Prism listed in an answer's `sl-violations` header (none when absent). */
export function violationsOf(headers: Headers): PrismViolation[] {
  const raw = headers.get("sl-violations");
  if (raw === null) return [];
  // Prism cuts a header over 8 KB to a prefix it marks; still findings, if no longer JSON.
  if (!raw.startsWith("[")) return [{ location: [], severity: "Error", message: raw }];
  return JSON.parse(raw) as PrismViolation[];
}
