/**
 * `#/audit` (admins): the audit log (`GET /v2/audit`), newest first: who changed what, or was refused. Filters by
 * user, action, target and time (also read from the page's query: `#/audit?target=<cluster id>`), older entries a
 * page at a time (`after`), and, while "Follow" is on, entries recorded since added on top (the first page read
 * again every few seconds; an entry's id is its position in the log, so an id after every one shown is a new entry).
 */
import { AUDIT_PAGE_DEFAULT, compareAuditIds, latestAuditId, type ListedAuditEntry } from "@corral/contracts";
import { h } from "../../components/dom.js";
import { field, type Field } from "../../components/form.js";
import { virtualTable } from "../../components/virtual-table.js";
import type { MountedPage, PageContext } from "../../router.js";
import { isSuperadmin } from "../../session.js";
import { adminOnly } from "./restricted.js";

const FOLLOW_MS = 3_000;

/** The text filters, by query parameter. */
const TEXT_FILTERS = [
  { name: "user", label: "User" },
  { name: "action", label: "Action", hint: "An endpoint (clusters.create), or a prefix ending in a dot (clusters.)" },
  { name: "target", label: "Target", hint: "An entity or cluster id" },
] as const;
const TIME_FILTERS = [
  { name: "since", label: "Since" },
  { name: "until", label: "Until" },
] as const;

const byNewest = (a: ListedAuditEntry, b: ListedAuditEntry) => Date.parse(b.time) - Date.parse(a.time) || compareAuditIds(b.id, a.id);

/** A `datetime-local` value (the browser's local time) as the query takes it (ISO 8601, UTC); "" stays "". */
const isoOfLocal = (value: string) => (value ? new Date(value).toISOString() : "");

/** What an entry did, in a few words: `POST /clusters/:id/nodes`, or `plan CLUSTER_CREATE` for a plan's end. */
const whatOf = (e: ListedAuditEntry) => (e.method === "PLAN" ? `plan ${e.operation ?? ""}`.trim() : `${e.method} ${e.route}`);

function auditPage(ctx: PageContext): MountedPage {
  const superadmin = isSuperadmin(ctx.session);
  const textFields = TEXT_FILTERS.map((f) => field({ ...f, value: ctx.query.get(f.name) ?? "" }));
  const timeFields = TIME_FILTERS.map((f) => field({ name: f.name, label: f.label, type: "text", value: "" }));
  for (const f of timeFields) f.input.setAttribute("type", "datetime-local");
  const problem = h("p", { class: "error", role: "alert" });
  const status = h("p", { class: "muted", role: "status" });
  const table = virtualTable<ListedAuditEntry>({
    label: "Audit log",
    empty: "No entries",
    key: (e) => e.id,
    columns: [
      { title: "Time", width: "11rem", cell: (e) => new Date(e.time).toLocaleString() },
      ...(superadmin ? [{ title: "Tenant", width: "8rem", hideWhenNarrow: true, cell: (e: ListedAuditEntry) => e.tenant || "—" }] : []),
      { title: "User", width: "8rem", cell: (e) => (e.user ? `${e.user}${e.role ? ` (${e.role})` : ""}` : "—") },
      { title: "Action", width: "12rem", cell: (e) => e.action },
      { title: "Request", hideWhenNarrow: true, cell: (e) => whatOf(e) },
      { title: "Target", width: "10rem", cell: (e) => e.target || "—" },
      {
        title: "Status",
        width: "9rem",
        cell: (e) => h("span", { class: `badge ${e.status < 400 ? "state-complete" : "state-failed"}`, title: e.failedTask ?? "" }, String(e.status), e.failedTask ? ` ${e.failedTask}` : ""),
      },
      { title: "Source", width: "8rem", hideWhenNarrow: true, cell: (e) => e.source || "—" },
    ],
  });

  let entries: ListedAuditEntry[] = [];
  let next: string | undefined;
  let run = 0;
  const older = h("button", { type: "button", hidden: true, onclick: () => void readPage(false) }, "Older entries");

  const filters = (): Record<string, string> => {
    const values = [...textFields.map((f) => [f.name, f.value().trim()]), ...timeFields.map((f) => [f.name, isoOfLocal(f.value())])];
    return Object.fromEntries(values.filter(([, v]) => v !== ""));
  };
  const show = () => {
    table.update(entries);
    older.hidden = next === undefined;
    status.textContent = `${entries.length} ${entries.length === 1 ? "entry" : "entries"}${next ? " (older ones remain)" : ""}`;
  };
  /** The first page with the filters (`fresh`), or the page after the last one shown. */
  const readPage = async (fresh: boolean) => {
    const mine = fresh ? ++run : run;
    try {
      const query = { ...filters(), limit: String(AUDIT_PAGE_DEFAULT), ...(!fresh && next ? { after: next } : {}) };
      const page = await ctx.api.call("metrics.audit", { query });
      if (mine !== run) return; // the filters changed meanwhile
      entries = fresh ? page.entries : [...entries, ...page.entries];
      next = page.next;
      problem.textContent = "";
      show();
    } catch (err) {
      problem.textContent = `Could not read the audit log: ${(err as Error).message}`;
    }
  };
  /** New entries on top: those of the first page whose id is above every id shown. */
  const readNew = async () => {
    const mine = run;
    try {
      const page = await ctx.api.call("metrics.audit", { query: { ...filters(), limit: String(AUDIT_PAGE_DEFAULT) } });
      if (mine !== run) return;
      const latest = latestAuditId(entries);
      const fresh = page.entries.filter((e) => compareAuditIds(e.id, latest) > 0);
      if (fresh.length > 0) {
        entries = [...fresh, ...entries].sort(byNewest);
        show();
      }
      problem.textContent = "";
    } catch (err) {
      problem.textContent = `Could not read the audit log: ${(err as Error).message}`;
    }
  };

  let timer: ReturnType<typeof setInterval> | undefined;
  const follow = h("input", { type: "checkbox", id: "audit-follow", name: "follow" });
  follow.addEventListener("change", () => {
    clearInterval(timer);
    timer = follow.checked ? setInterval(() => void readNew(), FOLLOW_MS) : undefined;
    if (follow.checked) void readNew();
  });
  const apply = (event: Event) => {
    event.preventDefault();
    void readPage(true);
  };
  const filterFields: Field[] = [...textFields, ...timeFields];
  void readPage(true);
  const element = h(
    "section",
    { class: "audit" },
    h("h1", null, "Audit log"),
    h("p", { class: "muted" }, superadmin ? "Every tenant's requests that changed something or were refused, and the ends of plans." : `Tenant ${ctx.session.tenant}: requests that changed something or were refused, and the ends of plans.`),
    h(
      "form",
      { class: "card audit-filters", onsubmit: apply },
      h("div", { class: "filters" }, ...filterFields.map((f) => f.element)),
      h("div", { class: "toolbar" }, h("button", { type: "submit", class: "primary" }, "Show"), h("label", { htmlFor: "audit-follow", class: "follow" }, follow, " Follow new entries")),
    ),
    problem,
    status,
    table.element,
    h("div", { class: "toolbar" }, older),
  );
  return { element, dispose: () => clearInterval(timer) };
}

export const auditPageForAdmins = adminOnly(auditPage);
