import type { NodeHealth } from "@corral/contracts";
import type { ClusterNode } from "../../src/domain/records.js";

/** A stored node `c1-<nodenum>` of cluster `c1` with `services`, hostname `h<nodenum>.example`, and `health` when given. */
export const testNode = (nodenum: number, services: string[], health?: NodeHealth): ClusterNode => ({
  id: `c1-${nodenum}`,
  clusterId: "c1",
  nodenum,
  services,
  properties: { hostname: `h${nodenum}.example` },
  results: {},
  actions: [],
  applied: [],
  ...(health ? { health } : {}),
});
