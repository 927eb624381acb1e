/** Stage levels of the task groups: the longest path from a source group (Kahn's algorithm over groups). */
import { BadRequestError } from "@corral/contracts";
import type { GroupEdge } from "./graph.js";

/** Level per group (0 for a group without incoming edges). */
export function groupLevels(groupCount: number, edges: readonly GroupEdge[]): number[] {
  const levels = new Array<number>(groupCount).fill(0);
  const indegree = new Array<number>(groupCount).fill(0);
  const outgoing: number[][] = Array.from({ length: groupCount }, () => []);
  for (const e of edges) {
    indegree[e.to] = (indegree[e.to] ?? 0) + 1;
    outgoing[e.from]?.push(e.to);
  }
  const queue: number[] = [];
  indegree.forEach((d, i) => {
    if (d === 0) queue.push(i);
  });
  let processed = 0;
  while (processed < queue.length) {
    const g = queue[processed++] as number;
    for (const next of outgoing[g] ?? []) {
      levels[next] = Math.max(levels[next] ?? 0, (levels[g] ?? 0) + 1);
      indegree[next] = (indegree[next] ?? 0) - 1;
      if (indegree[next] === 0) queue.push(next);
    }
  }
  if (processed !== groupCount) {
    // Unreachable with acyclic dependencies (checked when they are resolved); kept as a guard.
    throw new BadRequestError("task dependencies form a cycle", undefined, "dependency_cycle");
  }
  return levels;
}
