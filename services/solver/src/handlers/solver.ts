import type { EndpointHandlers } from "@corral/shared";
import { addServices, growCluster, solveLayout } from "../domain/layout/index.js";
import { planAction } from "../domain/planner/index.js";
import { compileConfig, createMacroContext, expandConfig } from "../domain/macros/index.js";

/** The solver's NATS handlers: each takes the library function's input (checked by serveEndpoints) and answers its output. */
export function solverHandlers() {
  return {
    "solver.layout": (req) => solveLayout(req),
    "solver.addServices": (req) => addServices(req),
    "solver.grow": (req) => growCluster(req),
    "solver.plan": (req) => planAction(req),
    "solver.expand": (req) => {
      const context = createMacroContext(req);
      const compiled = compileConfig(req.config);
      const ids = req.nodeIds ?? req.nodes.map((n) => n.id);
      return Object.fromEntries(ids.map((id) => [id, expandConfig(compiled, context, id)]));
    },
  } satisfies EndpointHandlers<"solver">;
}
