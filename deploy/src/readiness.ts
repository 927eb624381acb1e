import { connect } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { ServerProcess } from "./server-process.js";
import { describeExit } from "./server-process.js";

/**
 * Polls `probe` until it returns a value (not undefined), failing early when the server process
 * exits and with the server's last output when `timeoutMs` passes.
 */
export async function waitUntilReady<T>(
  server: ServerProcess,
  what: string,
  probe: () => Promise<T | undefined>,
  timeoutMs: number,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let delay = 10;
  for (;;) {
    if (server.hasExited()) {
      const info = await server.exited;
      throw new ServerStartError(`${what} exited before it was ready (${describeExit(info)})`, server.outputTail());
    }
    const value = await probe().catch(() => undefined);
    if (value !== undefined) {
      return value;
    }
    if (Date.now() > deadline) {
      throw new ServerStartError(`${what} was not ready after ${timeoutMs} ms`, server.outputTail());
    }
    await Promise.race([sleep(delay), server.exited]);
    delay = Math.min(delay * 2, 200);
  }
}

/** A server failed to start; `output` holds its last lines. */
export class ServerStartError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(output ? `${message}; its last output:\n${output}` : message);
    this.name = "ServerStartError";
  }
}

/** Options for {@link redisPing}. */
export interface RedisPingOptions {
  /** Sent with `AUTH` before the `PING`. @default none */
  password?: string;
  /** @default 1_000 ms */
  timeoutMs?: number;
}

/**
 * Sends raw RESP (`AUTH` when given a password, then `PING`) and resolves true when the `PING` is answered
 * `+PONG` (false on any other answer or error).
 */
export function redisPing(port: number, options: RedisPingOptions = {}): Promise<boolean> {
  const commands = [...(options.password === undefined ? [] : [["AUTH", options.password]]), ["PING"]];
  return new Promise((resolve) => {
    const socket = connect({ host: "127.0.0.1", port });
    let answer = "";
    const finish = (ok: boolean): void => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(options.timeoutMs ?? 1_000, () => finish(false));
    socket.once("error", () => finish(false));
    socket.once("connect", () => socket.write(commands.map(respCommand).join("")));
    socket.on("data", (chunk) => {
      answer += chunk.toString("utf8");
      const lines = answer.split("\r\n");
      if (lines.length > commands.length) {
        finish(lines[commands.length - 1]?.startsWith("+PONG") ?? false);
      }
    });
  });
}

/** A command as a RESP array of bulk strings (any bytes, unlike an inline command). */
function respCommand(args: string[]): string {
  return `*${args.length}\r\n${args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`).join("")}`;
}
