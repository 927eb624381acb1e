import type { NatsConnection } from "@nats-io/transport-node";
import type { ReplyOf, RequestOf } from "@corral/contracts";
import { callEndpoint } from "@corral/shared";
import { addServices, planAction, solveLayout } from "@corral/solver";

type Solve<N extends "solver.layout" | "solver.addServices" | "solver.plan"> = (request: RequestOf<N>) => Promise<ReplyOf<N>>;

/** The solvers an operation prepares with: the layout of a new cluster, the placement of added services, the plan. */
export interface Solver {
  layout: Solve<"solver.layout">;
  addServices: Solve<"solver.addServices">;
  plan: Solve<"solver.plan">;
}

/** The solver library in this process: real operations solve here, without a hop on their path. */
export const librarySolver: Solver = {
  layout: async (request) => solveLayout(request),
  addServices: async (request) => addServices(request),
  plan: async (request) => planAction(request),
};

/**
 * The solver service over NATS: dry runs are what-if queries that change nothing, so their CPU goes to the
 * service made for it instead of the process that runs the clusters.
 */
export function solverService(nc: NatsConnection): Solver {
  return {
    layout: (request) => callEndpoint(nc, "solver.layout", request),
    addServices: (request) => callEndpoint(nc, "solver.addServices", request),
    plan: (request) => callEndpoint(nc, "solver.plan", request),
  };
}
