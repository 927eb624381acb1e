import type { CallerCheck } from "../caller.js";

/** Why the gateway ends an event stream, told to the client before it closes. */
export interface Closing {
  reason: "too_slow" | "replay_limit" | "token_invalid" | "unavailable" | "shutdown";
  message: string;
  /** For `replay_limit`: the id to resume after. */
  lastEventId?: number;
}

/** One open event stream (an SSE response or a WebSocket). */
export interface StreamConnection {
  /** The `Authorization` header it was opened with ("" without security). */
  readonly authorization: string;
  heartbeat(): void;
  close(closing: Closing): void;
}

/**
 * The open event streams of a gateway: counted against the cap, and every `heartbeatMs` sent a heartbeat and
 * their token checked again (a token that expired or was revoked ends the stream, as it would end REST calls).
 */
export class Connections {
  private readonly open = new Set<StreamConnection>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    readonly max: number,
    heartbeatMs: number,
    private readonly caller: CallerCheck,
  ) {
    this.timer = setInterval(() => this.tick(), heartbeatMs);
    this.timer.unref();
  }

  get size(): number {
    return this.open.size;
  }

  get full(): boolean {
    return this.open.size >= this.max;
  }

  add(c: StreamConnection): void {
    this.open.add(c);
  }

  remove(c: StreamConnection): void {
    this.open.delete(c);
  }

  closeAll(closing: Closing): void {
    for (const c of [...this.open]) c.close(closing);
    clearInterval(this.timer);
  }

  private tick(): void {
    for (const c of this.open) {
      c.heartbeat();
      if (!c.authorization) continue;
      void this.caller.tokenProblem(c.authorization).then((problem) => {
        if (problem && this.open.has(c)) c.close({ reason: "token_invalid", message: `the stream's token no longer holds: ${problem}` });
      });
    }
  }
}

/** 503 body past the cap. */
export const capacityMessage = (max: number) =>
  `this gateway already serves ${max} event streams (events.maxConnections); try again later or another gateway`;
