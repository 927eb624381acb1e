/**
 * Node usage as tests expect it from the published node events (spec 2.11, 4.9; services/metrics/README.md), and a
 * wait that proves the metrics service has recorded those events before a test compares figures.
 */
import type { NodeEvent } from "@corral/clusters/testing";
import { eventually } from "./eventually.js";

/** One node's life in whole seconds (event times floored); `deleted` absent while no deletion was published. */
export interface NodeLife {
  clusterId: string;
  nodeId: string;
  owner: string;
  created: number;
  deleted?: number;
}

/** What a node event says of a node's life (the clusters service's events carry more). */
export type NodeLifeEvent = Pick<NodeEvent, "type" | "clusterId" | "nodeId" | "ownerId" | "time">;

/** A `GET /metrics/nodes/usage` answer. */
export interface UsageAnswer {
  start: number;
  end: number;
  data: Array<{ time: number; value: number }>;
}

/**
 * The lives of the nodes that `events` (in stream order) created, as the metrics service records them: a node's
 * first creation and first deletion count, a deletion stamped before its creation counts as its creation.
 */
export function nodeLives(events: readonly NodeLifeEvent[]): NodeLife[] {
  const lives = new Map<string, NodeLife>();
  const key = (e: NodeLifeEvent) => `${e.clusterId}/${e.nodeId}`;
  for (const e of events) {
    if (e.type === "node.created" && !lives.has(key(e))) {
      lives.set(key(e), { clusterId: e.clusterId, nodeId: e.nodeId, owner: e.ownerId, created: Math.floor(e.time / 1000) });
    }
  }
  for (const life of lives.values()) {
    const deletion = events.find((e) => e.type === "node.deleted" && key(e) === `${life.clusterId}/${life.nodeId}`);
    if (deletion) life.deleted = Math.max(life.created, Math.floor(deletion.time / 1000));
  }
  return [...lives.values()];
}

/** Node-seconds of `lives` over [start, end]; a node without a deletion lives until `end`. */
export function nodeSeconds(lives: ReadonlyArray<Pick<NodeLife, "created" | "deleted">>, start: number, end: number): number {
  return lives.reduce((sum, l) => sum + Math.max(0, Math.min(l.deleted ?? end, end) - Math.max(l.created, start)), 0);
}

/**
 * Whether a usage answer read without `end` (so its end is the service's now) proves every creation and deletion of
 * `lives` recorded: its value equals their node-seconds, and its end is past the last of those seconds. Within the
 * second of a deletion no answer can prove it: a node whose deletion is not recorded yet counts until now, which is
 * then its deletion second, so it reads exactly as the closed node would (and as much as a second later, it reads
 * one node-second more per node, as seen once in CI).
 */
export function usageProvesRecorded(answer: UsageAnswer, lives: readonly NodeLife[]): boolean {
  const last = Math.max(...lives.map((l) => l.deleted ?? l.created));
  return answer.end > last && answer.data[0]?.value === nodeSeconds(lives, answer.start, answer.end);
}

/**
 * Reads usage (`read` asks without `end`) until {@link usageProvesRecorded}; returns that answer. On timeout the
 * error names the last answer and the lives it was compared with.
 */
export async function waitForRecordedUsage(
  read: () => Promise<UsageAnswer>,
  lives: readonly NodeLife[],
  options: { what: string; timeoutMs?: number },
): Promise<UsageAnswer> {
  let last: UsageAnswer | undefined;
  try {
    return await eventually(
      async () => {
        last = await read();
        return usageProvesRecorded(last, lives) ? last : false;
      },
      { what: options.what, timeoutMs: options.timeoutMs ?? 10_000 },
    );
  } catch (err) {
    const why = `last answer ${JSON.stringify(last)}, node lives ${JSON.stringify(lives)}`;
    throw new Error(`${err instanceof Error ? err.message : String(err)}; ${why}`, { cause: err });
  }
}
