/**
 * The edges between one segment's task groups: the per-node chains in the segment's task order (`node` scope)
 * and the cross-service ordering rules (`cluster` scope), reduced to direct dependencies.
 */
import { NODE_TASKS, ORDERING_RULES } from "./actions.js";
import type { GroupEdge } from "./graph.js";
import type { PlanSegment } from "./segment.js";
import type { TaskGroupDrafts } from "./task-groups.js";

/** The edges of one segment's groups, in the order they are found, each pair of groups once. */
export function groupEdges(segment: PlanSegment, groups: TaskGroupDrafts): GroupEdge[] {
  const { drafts, find } = groups;
  const { order, deps } = segment;
  const edges: GroupEdge[] = [];
  const edgeKeys = new Set<string>();
  const addEdge = (from: number, to: number, scope: GroupEdge["scope"]): void => {
    const k = `${from},${to}`;
    if (edgeKeys.has(k)) return;
    edgeKeys.add(k);
    edges.push({ from, to, scope });
  };
  // Per-node chains: node-level tasks, then each planned service's defined tasks, in the segment's order. A
  // node-level task after service tasks (DELETE of a leaving node) follows every service's chain.
  let previousNodeTask: number | undefined;
  for (const task of order) {
    const g = NODE_TASKS.has(task) ? find(task, "") : undefined;
    if (g === undefined) continue;
    if (previousNodeTask !== undefined) addEdge(previousNodeTask, g, "node");
    previousNodeTask = g;
  }
  for (const name of [...segment.serviceNodes.keys()].sort()) {
    let previous: number | undefined;
    for (const task of order) {
      const g = find(task, NODE_TASKS.has(task) ? "" : name);
      if (g === undefined) continue;
      if (previous !== undefined) addEdge(previous, g, "node");
      previous = g;
    }
  }
  // Cross-service rules, reduced to the nearest dependencies that have the rule's `from` task in the plan:
  // actions pass through services lacking them, and a dependency reachable through another is implied.
  for (const rule of ORDERING_RULES) {
    drafts.forEach((draft, to) => {
      if (draft.taskName !== rule.to || draft.service === "") return;
      const candidates: string[] = [];
      for (const dep of deps.closure(rule.kind, draft.service)) {
        if (find(rule.from, dep) !== undefined) candidates.push(dep);
      }
      candidates.sort();
      for (const dep of candidates) {
        const implied = candidates.some((other) => other !== dep && deps.closure(rule.kind, other).has(dep));
        if (implied) continue;
        const from = find(rule.from, dep) as number;
        if (rule.reversed) addEdge(to, from, "cluster");
        else addEdge(from, to, "cluster");
      }
    });
  }
  return edges;
}
