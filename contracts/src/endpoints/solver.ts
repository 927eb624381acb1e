/**
 * The solver's endpoints: its library functions over NATS (the clusters service calls the library in-process).
 * Their request and reply types are in solver-types.ts; the solver library takes and returns the same.
 */
import type { Json } from "../entities.js";
import { subjects } from "../subjects.js";
import { endpointsOf } from "./endpoint.js";
import { anyJson, anyObject, arrayOf, count, objectOf, recordOf, string } from "./json-schema.js";
import type {
  AddServicesRequest,
  AddServicesResult,
  ExpandRequest,
  LayoutRequest,
  LayoutSolution,
  Plan,
  PlanRequest,
} from "./solver-types.js";

const names = arrayOf(string);
const stats = objectOf({ steps: count, candidateLayouts: count });
const open = (required: Record<string, typeof anyJson>) => objectOf(required, { additionalProperties: true });

const define = endpointsOf("solver");
const s = subjects.solver;

export const solverEndpoints = {
  "solver.layout": define.internal<LayoutRequest, LayoutSolution>({
    subject: s.layout,
    request: open({ template: anyObject, provider: anyObject, catalog: anyObject, numMachines: count, clusterId: string, clusterName: string }),
    reply: objectOf({
      services: names,
      dnsSuffix: string,
      nodes: arrayOf(
        objectOf({
          id: string,
          clusterId: string,
          nodenum: count,
          services: names,
          hardwaretype: string,
          imagetype: string,
          properties: recordOf(anyJson),
        }),
      ),
      layout: arrayOf(objectOf({ services: names, hardwaretype: string, imagetype: string, count })),
      stats,
    }),
  }),
  "solver.addServices": define.internal<AddServicesRequest, AddServicesResult>({
    subject: s.addServices,
    request: open({ template: anyObject, catalog: anyObject, nodes: arrayOf(anyObject), services: names }),
    reply: objectOf({
      services: names,
      changedNodes: arrayOf(objectOf({ id: string, nodenum: count, addedServices: names, services: names })),
      placements: arrayOf(objectOf({ service: string, nodeIds: names })),
      stats,
    }),
  }),
  "solver.plan": define.internal<PlanRequest, Plan>({
    subject: s.plan,
    request: open({ action: string, nodes: arrayOf(anyObject), services: arrayOf(anyObject) }),
    reply: objectOf({ action: string, stages: arrayOf(arrayOf(objectOf({ taskName: string, nodeId: string, service: string }))) }),
  }),
  /** Node id -> the config expanded for that node. */
  "solver.expand": define.internal<ExpandRequest, Record<string, Json>>({
    subject: s.expand,
    request: open({ config: anyJson, nodes: arrayOf(anyObject) }),
    reply: recordOf(anyJson),
  }),
};
