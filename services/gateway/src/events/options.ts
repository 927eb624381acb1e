/** Limits of the event streams one gateway serves (config `events.*`). */
export interface EventStreamOptions {
  /** SSE and WebSocket connections at once; past it a new one is answered 503. @default 10000 */
  maxConnections?: number;
  /** Bytes a client may fall behind (waiting to be written to it) before it is closed as too slow. @default 1 MiB */
  maxBufferedBytes?: number;
  /** SSE heartbeat comments, WebSocket pings and token re-checks, this often. @default 15000 */
  heartbeatMs?: number;
  /** Past events one subscription replays; past it the client is asked to resume from the last one sent. @default 10000 */
  maxReplayEvents?: number;
  /** Live events kept in memory (per cluster, newest clusters first) to replay to new clients without reading the stream. @default 20000 */
  maxRecentEvents?: number;
}

export type EventStreamLimits = Required<EventStreamOptions>;

export function eventStreamLimits(options: EventStreamOptions = {}): EventStreamLimits {
  return {
    maxConnections: options.maxConnections ?? 10_000,
    maxBufferedBytes: options.maxBufferedBytes ?? 1024 * 1024,
    heartbeatMs: options.heartbeatMs ?? 15_000,
    maxReplayEvents: options.maxReplayEvents ?? 10_000,
    maxRecentEvents: options.maxRecentEvents ?? 20_000,
  };
}
