/** Every command: those derived from the endpoint table, and the hand-written ones (which win on equal words). */
import { followJob } from "../progress/follow-job.js";
import { dryRunView } from "../output/cluster-views.js";
import { auditCommand } from "./audit-command.js";
import { applyCommand, exportCommand } from "./catalog-commands.js";
import { nodesCommand, planCommand, statusCommand, watchCommand } from "./cluster-commands.js";
import type { Command } from "./command.js";
import { endpointCommands } from "./endpoint-commands.js";
import { nodesAddCommand, nodesRemoveCommand, nodesReplaceCommand } from "./node-commands.js";
import {
  configSetCommand,
  configShowCommand,
  configUseCommand,
  loginCommand,
  logoutCommand,
  revokeTokensCommand,
  tokenCommand,
} from "./session-commands.js";

const handWritten: readonly Command[] = [
  statusCommand,
  planCommand,
  watchCommand,
  nodesCommand,
  nodesAddCommand,
  nodesRemoveCommand,
  nodesReplaceCommand,
  auditCommand,
  applyCommand,
  exportCommand,
  loginCommand,
  logoutCommand,
  tokenCommand,
  revokeTokensCommand,
  configSetCommand,
  configShowCommand,
  configUseCommand,
];

export function allCommands(): Command[] {
  const derived = endpointCommands({ wait: (ctx, clusterId) => followJob(ctx, clusterId), dryRunTable: dryRunView });
  const same = (a: Command, b: Command) => a.words.join(" ") === b.words.join(" ");
  return [...handWritten, ...derived.filter((d) => !handWritten.some((h) => same(h, d)))];
}
