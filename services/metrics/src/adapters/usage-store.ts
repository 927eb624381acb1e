import { createHash } from "node:crypto";
import type { RedisClientType } from "redis";
import { keyToken } from "@corral/contracts";
import type { NodeEvent } from "../domain/node-events.js";
import type { UsageScope } from "../domain/usage-query.js";
import { APPLY_EVENTS, QUERY_USAGE } from "./usage-scripts.js";

/** The Redis client type the store works with (`createClient()` from `redis`). */
export type RedisClient = RedisClientType;

/** Node-seconds of a scope over a window, all in seconds. */
export interface UsageFigure {
  start: number;
  end: number;
  value: number;
}

/** Recorded node lifetimes and node-seconds queries over them. */
export interface UsageStore {
  /** Records events; idempotent and order-independent. Returns how many changed something. */
  apply(events: readonly NodeEvent[]): Promise<number>;
  /**
   * Node-seconds of `scope` over [start, end]; `start` absent means the scope's first recorded creation (0 when
   * none, never after `end`). Open nodes count until `nowSeconds`.
   */
  usage(scope: UsageScope, window: { start?: number; end: number }, nowSeconds: number): Promise<UsageFigure>;
  /**
   * Forgets a deleted tenant: its node records and the series of its tenant and tenant-user scopes. The all-tenants
   * and user-across-tenants series (superadmin views) keep the node-seconds it used. Returns the keys removed.
   */
  purgeTenant(tenant: string): Promise<number>;
}

export interface UsageStoreOptions {
  /** Prefix of every key. @default "corral:metrics:" */
  keyPrefix?: string;
  /** Events per script call. @default 256 */
  batchSize?: number;
}

/** The scope's part of the key names (services/metrics/README.md, Redis layout). */
export function scopeKey(scope: UsageScope): string {
  switch (scope.kind) {
    case "all":
      return "a";
    case "tenant":
      return `t:${keyToken(scope.tenant)}`;
    case "tenantUser":
      return `tu:${keyToken(scope.tenant)}:${keyToken(scope.user)}`;
    case "user":
      return `u:${keyToken(scope.user)}`;
  }
}

const sha1 = (text: string) => createHash("sha1").update(text).digest("hex");

function isNoScript(err: unknown): boolean {
  return err instanceof Error && err.message.startsWith("NOSCRIPT");
}

/** A UsageStore on one Redis (not Redis Cluster: the scripts touch keys they compute). */
export function createRedisUsageStore(client: RedisClient, options: UsageStoreOptions = {}): UsageStore {
  const prefix = options.keyPrefix ?? "corral:metrics:";
  const batchSize = options.batchSize ?? 256;
  const scripts = { apply: { text: APPLY_EVENTS, sha: sha1(APPLY_EVENTS) }, query: { text: QUERY_USAGE, sha: sha1(QUERY_USAGE) } };

  const run = async (script: { text: string; sha: string }, args: string[]): Promise<unknown> => {
    try {
      return await client.evalSha(script.sha, { arguments: args });
    } catch (err) {
      if (!isNoScript(err)) throw err;
      return client.eval(script.text, { arguments: args });
    }
  };

  return {
    async apply(events) {
      let applied = 0;
      for (let i = 0; i < events.length; i += batchSize) {
        const args = [prefix];
        for (const e of events.slice(i, i + batchSize)) {
          args.push(
            e.kind === "created" ? "c" : "d",
            keyToken(e.tenant),
            keyToken(e.clusterId),
            keyToken(e.nodeId),
            keyToken(e.ownerId),
            String(Math.max(0, Math.floor(e.timeSeconds))),
          );
        }
        const changed = Number(await run(scripts.apply, args));
        applied += changed;
      }
      return applied;
    },
    async usage(scope, window, nowSeconds) {
      const reply = (await run(scripts.query, [
        prefix,
        scopeKey(scope),
        String(window.start ?? -1),
        String(window.end),
        String(nowSeconds),
      ])) as unknown[];
      const [start, end, value] = reply.map(Number);
      return { start: start ?? 0, end: end ?? window.end, value: value ?? 0 };
    },
    async purgeTenant(tenant) {
      // Node records, then the `t:<T>` and `tu:<T>:<U>` series (usage-scripts.ts); a token holds no ':' and no glob character.
      const t = keyToken(tenant);
      let removed = 0;
      for (const pattern of [`n:${t}:*`, `s:t:${t}:*`, `s:tu:${t}:*`]) {
        for await (const keys of client.scanIterator({ MATCH: prefix + pattern, COUNT: 1000 })) {
          if (keys.length > 0) removed += await client.unlink(keys);
        }
      }
      return removed;
    },
  };
}
