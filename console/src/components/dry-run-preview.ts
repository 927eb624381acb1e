/** What a dry run answered (`?dryRun=true`): the layout it would make and its plan, shown before the user confirms. */
import type { DryRunResult } from "@corral/contracts";
import { h } from "./dom.js";
import { planStages } from "./plan-stages.js";

/** Narrows an answer of `api.dryRun` (the table types it as the endpoint's reply or a dry-run result). */
export function isDryRunResult(value: unknown): value is DryRunResult {
  return typeof value === "object" && value !== null && (value as { dryRun?: unknown }).dryRun === true;
}

export function dryRunPreview(result: DryRunResult): HTMLElement {
  const layouts = new Map<string, number>();
  for (const node of result.layout.nodes) {
    const key = `${node.hardwaretype} / ${node.imagetype}: ${node.services.join(", ") || "(no services)"}`;
    layouts.set(key, (layouts.get(key) ?? 0) + 1);
  }
  return h(
    "div",
    { class: "dry-run" },
    h("h3", null, `Layout: ${result.layout.nodes.length} ${result.layout.nodes.length === 1 ? "node" : "nodes"}`),
    h("ul", { class: "layout" }, ...[...layouts].map(([what, count]) => h("li", null, h("strong", null, `${count} ×`), ` ${what}`))),
    result.plan.stages.length === 0
      ? h("p", { class: "nothing-to-do" }, `Plan: ${result.plan.action} has nothing to do here; no task would run.`)
      : h("h3", null, `Plan: ${result.plan.action} in ${result.plan.stages.length} ${result.plan.stages.length === 1 ? "stage" : "stages"}`),
    planStages(result.plan.stages.map((stage) => stage.map((t) => ({ taskName: t.taskName, service: t.service, state: "waiting" as const }))), undefined),
  );
}
