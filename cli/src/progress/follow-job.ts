/** Following a cluster's job to its end: snapshots from a source, drawn by the renderer the output allows. */
import type { CommandContext, CommandOutcome } from "../commands/command.js";
import { ExitCode } from "../errors.js";
import type { ApiClient } from "../http/api-client.js";
import { streamProgress } from "./event-source.js";
import { pollProgress } from "./poll-source.js";
import { outcomeOf, type ProgressSnapshot } from "./progress-text.js";
import { liveRenderer, plainRenderer, type ProgressRenderer } from "./renderers.js";

export interface FollowOptions {
  /** Between two polls. @default 1000 */
  intervalMs?: number;
  /** Poll even where the gateway streams events. @default false */
  poll?: boolean;
}

/** The event stream where there is one, else polling. */
async function* progressOf(client: ApiClient, clusterId: string, options: FollowOptions): AsyncGenerator<ProgressSnapshot> {
  if (!options.poll && (yield* streamProgress(client, clusterId)) === "ended") return;
  yield* pollProgress(client, clusterId, options);
}

/**
 * Draws the job's progress until it ends. With `-o table` progress goes to stdout; with json or yaml it goes
 * to stderr and stdout gets the final state as one document. Exit 0 when the job succeeded, 1 when it failed.
 */
export async function followJob(ctx: CommandContext, clusterId: string, options: FollowOptions = {}): Promise<CommandOutcome> {
  const toStdout = ctx.format === "table";
  const stream = toStdout ? ctx.stdout : ctx.stderr;
  const write = (text: string) => void stream.write(text);
  const isTerminal = toStdout ? ctx.isTTY : Boolean((ctx.stderr as { isTTY?: boolean }).isTTY);
  const renderer: ProgressRenderer = isTerminal
    ? // A pseudo-terminal without a size says 0 columns.
      liveRenderer(write, { columns: (stream as { columns?: number }).columns || 100, color: !ctx.env["NO_COLOR"] })
    : plainRenderer(write);
  let last: ProgressSnapshot | undefined;
  for await (const snapshot of progressOf(ctx.client(), clusterId, options)) {
    if (last) renderer.update(last);
    last = snapshot;
  }
  if (!last) throw new Error("the progress source ended without a snapshot");
  renderer.finish(last);
  const exitCode = outcomeOf(last.status) === "failed" ? ExitCode.Failed : ExitCode.Ok;
  return { exitCode, ...(toStdout ? {} : { result: { value: last } }) };
}
