import { BadRequestError, subjects, type Handler, type Json } from "@corral/shared";
import { addServices, solveLayout, type AddServicesRequest, type LayoutRequest } from "../domain/layout/index.js";
import { planAction, type PlanRequest } from "../domain/planner/index.js";
import { compileConfig, createMacroContext, expandConfig, type MacroClusterInput } from "../domain/macros/index.js";

/** Expand a config for some (or all) nodes of a cluster. */
export interface ExpandRequest extends MacroClusterInput {
  config: Json;
  /** Nodes to expand for; all nodes when absent. */
  nodeIds?: string[];
}

function requireObject<T>(value: unknown, what: string): T {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new BadRequestError(`${what} request must be an object`);
  }
  return value as T;
}

/** The solver's NATS handlers: each takes the library function's input and answers its output. */
export function solverHandlers(): Record<string, Handler> {
  const s = subjects.solver;
  return {
    [s.layout]: (req: unknown) => solveLayout(requireObject<LayoutRequest>(req, "layout")),
    [s.addServices]: (req: unknown) => addServices(requireObject<AddServicesRequest>(req, "addServices")),
    [s.plan]: (req: unknown) => planAction(requireObject<PlanRequest>(req, "plan")),
    [s.expand]: (req: unknown) => {
      const r = requireObject<ExpandRequest>(req, "expand");
      if (!Array.isArray(r.nodes)) throw new BadRequestError("expand request needs nodes");
      const context = createMacroContext(r);
      const compiled = compileConfig(r.config);
      const ids = r.nodeIds ?? r.nodes.map((n) => n.id);
      return Object.fromEntries(ids.map((id) => [id, expandConfig(compiled, context, id)]));
    },
  };
}
