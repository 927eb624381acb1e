import type { NatsConnection } from "@nats-io/transport-node";
import { serveEndpoints, type Logger, type MetricsRegistry } from "@corral/shared";
import { solverHandlers } from "./handlers/solver.js";

export interface SolverServiceDeps {
  nc: NatsConnection;
  log: Logger;
  /** The process's Prometheus metrics (request durations per endpoint). @default none */
  metrics?: MetricsRegistry;
}

export interface SolverService {
  stop(): Promise<void>;
}

/** Serves the solver library over NATS (subjects `corral.solver.*`). */
export async function startSolverService(deps: SolverServiceDeps): Promise<SolverService> {
  const served = serveEndpoints({ nc: deps.nc, service: "solver", log: deps.log, handlers: solverHandlers(), metrics: deps.metrics });
  return { stop: () => served.stop() };
}
