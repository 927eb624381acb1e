/**
 * Real servers for tests: one per test file, stopped in `test.after.always`.
 * Thin wrappers over `@corral/deploy`, so tests and the launcher start servers the same way.
 */
import { startNats as deployStartNats, startRedis as deployStartRedis } from "@corral/deploy";
import type { NatsHandle, NatsOptions, RedisOptions, ServerHandle } from "@corral/deploy";

export type { NatsHandle, NatsOptions, RedisOptions, ServerHandle };

/** Starts a throwaway nats-server (2.10+) on 127.0.0.1; `{ jetstream: true }` for JetStream. */
export function startNats(opts: NatsOptions = {}): Promise<NatsHandle> {
  return deployStartNats(opts);
}

/** Starts a throwaway, non-persisting redis-server on 127.0.0.1. */
export function startRedis(opts: RedisOptions = {}): Promise<ServerHandle> {
  return deployStartRedis(opts);
}
