import type { Actors } from "../actor/index.js";
import type { ReadingDeps } from "../adapters/deps.js";

/** What every operation needs: the stores and clients, and the actors through which every change goes. */
export interface OperationContext {
  deps: ReadingDeps;
  actors: Actors;
}
