import { decode, type TaskMessage } from "@corral/contracts";

/** A decoded task, or why it cannot be handled at all (no identity to report a result under). */
export type ParsedTask = { ok: true; task: TaskMessage } | { ok: false; reason: string };

/**
 * Decodes a task message and checks what a result needs: `taskId` and `dispatch`. The rest is checked by the runner,
 * which reports a bad task as a failed result.
 */
export function parseTaskMessage(data: Uint8Array): ParsedTask {
  let value: unknown;
  try {
    value = decode(data);
  } catch (err) {
    return { ok: false, reason: `not msgpack: ${(err as Error).message}` };
  }
  if (typeof value !== "object" || value === null) return { ok: false, reason: "not an object" };
  const task = value as Partial<TaskMessage>;
  if (typeof task.taskId !== "string" || task.taskId === "") return { ok: false, reason: "no taskId" };
  if (!Number.isInteger(task.dispatch) || (task.dispatch as number) < 1) return { ok: false, reason: "no dispatch" };
  return { ok: true, task: value as TaskMessage };
}
