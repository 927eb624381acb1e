/** `corral audit`: the audit log, listed page after page or followed as entries are recorded (admins only). */
import { followAudit, listAudit, type AuditFilters } from "../audit/audit-reader.js";
import { auditLineWriter, auditTable } from "../audit/audit-views.js";
import { UsageError } from "../errors.js";
import { flag, positiveIntegerOption, stringOption, type Command, type CommandInput } from "./command.js";

/** Filter flags by the query parameter they set: `--user` is taken by the caller's identity, so `--by` names whose. */
const FILTERS = { since: "since", until: "until", by: "user", action: "action", target: "target" } as const;

export const auditCommand: Command = {
  words: ["audit"],
  summary: "the audit log, newest first: who changed what or was refused (tenant admins their tenant's, the superadmin all); --follow for new entries",
  options: {
    since: { type: "string", valueName: "time", description: "only entries at or after this time (ISO 8601 or ms since the epoch)" },
    until: { type: "string", valueName: "time", description: "only entries at or before this time" },
    by: { type: "string", valueName: "user", description: "only this user's entries (--user is who calls)" },
    action: { type: "string", valueName: "action", description: "only this endpoint (clusters.create), or names starting with it when it ends in a dot (clusters.)" },
    target: { type: "string", valueName: "id", description: "only entries about this entity or cluster" },
    limit: { type: "string", valueName: "n", description: "entries to show (default 100; with --follow, 10 before following)" },
    after: { type: "string", valueName: "id", description: "go on past an earlier listing (the id it printed as older entries)" },
    follow: { type: "boolean", short: "f", description: "then print new entries as they are recorded, oldest first, until interrupted" },
    interval: { type: "string", valueName: "ms", description: "with --follow: between two polls (default 2000)" },
  },
  async run(ctx, input) {
    const filters = filtersOf(input);
    const limit = positiveIntegerOption(input, "limit");
    const after = stringOption(input, "after");
    if (!flag(input, "follow")) {
      const listing = await listAudit(ctx.client(), filters, limit ?? 100, after);
      return { result: { value: listing, table: () => auditTable(listing.entries, listing.next) } };
    }
    if (filters["until"] !== undefined || after !== undefined) throw new UsageError("--follow shows what is recorded from now on: drop --until and --after");
    const print = auditLineWriter(ctx.format, (text) => void ctx.stdout.write(text));
    const interval = positiveIntegerOption(input, "interval");
    for await (const entries of followAudit(ctx.client(), filters, { ...(limit ? { initial: limit } : {}), ...(interval ? { intervalMs: interval } : {}) })) {
      print(entries);
    }
    return {};
  },
};

function filtersOf(input: CommandInput): AuditFilters {
  return Object.fromEntries(
    Object.entries(FILTERS).flatMap(([option, parameter]) => {
      const value = stringOption(input, option);
      return value === undefined ? [] : [[parameter, value]];
    }),
  );
}
