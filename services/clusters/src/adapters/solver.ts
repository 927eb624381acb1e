import type { NatsConnection } from "@nats-io/transport-node";
import type { ReplyOf, RequestOf } from "@corral/contracts";
import { callEndpoint } from "@corral/shared";

type Solve<N extends "solver.layout" | "solver.addServices" | "solver.grow" | "solver.plan"> = (request: RequestOf<N>) => Promise<ReplyOf<N>>;

/** The solvers an operation prepares with: the layout of a new cluster, the placement of added services, new nodes, the plan. */
export interface Solver {
  layout: Solve<"solver.layout">;
  addServices: Solve<"solver.addServices">;
  grow: Solve<"solver.grow">;
  plan: Solve<"solver.plan">;
}

/**
 * The solver service over NATS, for every operation and every dry run: a long layout search runs there, off this
 * process's event loop, and the solver scales by its own instances. A reply larger than one NATS message (the plan
 * of a 10,000-node cluster) travels deflated.
 */
export function solverService(nc: NatsConnection): Solver {
  return {
    layout: (request) => callEndpoint(nc, "solver.layout", request),
    addServices: (request) => callEndpoint(nc, "solver.addServices", request),
    grow: (request) => callEndpoint(nc, "solver.grow", request),
    plan: (request) => callEndpoint(nc, "solver.plan", request),
  };
}
