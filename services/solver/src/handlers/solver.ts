import {
  BadRequestError,
  type ExpandRequest,
  type AddServicesRequest,
  type LayoutRequest,
  type PlanRequest,
} from "@corral/contracts";
import type { EndpointHandlers } from "@corral/shared";
import { addServices, solveLayout } from "../domain/layout/index.js";
import { planAction } from "../domain/planner/index.js";
import { compileConfig, createMacroContext, expandConfig } from "../domain/macros/index.js";

function requireObject<T>(value: unknown, what: string): T {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BadRequestError(`${what} request must be an object`);
  }
  return value as T;
}

/** The solver's NATS handlers: each takes the library function's input and answers its output. */
export function solverHandlers() {
  return {
    "solver.layout": (req: unknown) => solveLayout(requireObject<LayoutRequest>(req, "layout")),
    "solver.addServices": (req: unknown) => addServices(requireObject<AddServicesRequest>(req, "addServices")),
    "solver.plan": (req: unknown) => planAction(requireObject<PlanRequest>(req, "plan")),
    "solver.expand": (req: unknown) => {
      const r = requireObject<ExpandRequest>(req, "expand");
      if (!Array.isArray(r.nodes)) throw new BadRequestError("expand request needs nodes");
      const context = createMacroContext(r);
      const compiled = compileConfig(r.config);
      const ids = r.nodeIds ?? r.nodes.map((n) => n.id);
      return Object.fromEntries(ids.map((id) => [id, expandConfig(compiled, context, id)]));
    },
  } satisfies EndpointHandlers<"solver">;
}
