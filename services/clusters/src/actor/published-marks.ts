import type { Logger } from "@corral/shared";
import type { PlanEvent } from "../domain/plan-machine.js";
import type { PlanRef } from "../domain/records.js";

type PublishedMark = Extract<PlanEvent, { type: "dispatch.published" }>;

/**
 * `dispatch.published` marks that wait to ride on their plan's next write instead of costing a write of their own:
 * a stage's results usually arrive within milliseconds, and their write carries the mark. A mark no write picked up
 * within `flushAfterMs` is written alone. Losing one (a crash) is what losing the separate write always risked:
 * the plan keeps the dispatches as unpublished and the reconciler publishes them again after its `republishAfterMs`
 * (JetStream drops the duplicates; a worker runs no dispatch that already has a result), so `flushAfterMs` must
 * stay well below that.
 */
export interface PublishedMarks {
  /** Holds `mark` for the plan's next write (or the flush). */
  add(ref: PlanRef, mark: PublishedMark): void;
  /** The plan's held marks, now owned by the caller (who gives them back with `add` if its write fails). */
  take(ref: PlanRef): PublishedMark[];
  /** Writes every held mark now (a stopping service). */
  flushAll(): Promise<void>;
}

/** Held this long at most: a quarter of the reconciler's default 10 s before it republishes unconfirmed dispatches. */
export const PUBLISHED_MARK_FLUSH_MS = 2_500;

export function createPublishedMarks(
  write: (ref: PlanRef) => Promise<void>,
  log: Logger,
  flushAfterMs = PUBLISHED_MARK_FLUSH_MS,
): PublishedMarks {
  const held = new Map<string, { ref: PlanRef; marks: PublishedMark[]; timer: ReturnType<typeof setTimeout> }>();
  const keyOf = (ref: PlanRef) => `${ref.clusterId}/${ref.planId}`;

  const flush = (ref: PlanRef) =>
    write(ref).catch((err: unknown) => {
      // The reconciler republishes what the plan still lists as unpublished; the duplicates are dropped.
      log.warn("writing a plan's published marks failed; the reconciler will publish its dispatches again", { plan: ref.planId, err });
    });

  return {
    add(ref, mark) {
      const key = keyOf(ref);
      const entry = held.get(key);
      if (entry) {
        entry.marks.push(mark);
        return;
      }
      const timer = setTimeout(() => void flush(ref), flushAfterMs);
      timer.unref();
      held.set(key, { ref, marks: [mark], timer });
    },
    take(ref) {
      const key = keyOf(ref);
      const entry = held.get(key);
      if (!entry) return [];
      clearTimeout(entry.timer);
      held.delete(key);
      return entry.marks;
    },
    async flushAll() {
      await Promise.all([...held.values()].map((entry) => flush(entry.ref)));
    },
  };
}
