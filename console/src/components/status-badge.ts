import { h } from "./dom.js";

/** A cluster status as a coloured badge (`active`, `pending`, ...); colours in style.css `.status-*`. */
export const statusBadge = (status: string) => h("span", { class: `badge status-${status}`, dataset: { status } }, status);

/** `3/7 steps` of the cluster's current or last job. */
export const progressText = (p: { stepscompleted: number; stepstotal: number; action: string; actionstatus: string }) =>
  `${p.action.toLowerCase()} ${p.actionstatus.toLowerCase()} ${p.stepscompleted}/${p.stepstotal}`;
