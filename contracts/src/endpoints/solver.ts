/**
 * The solver's endpoints: its library functions over NATS (the clusters service calls the library in-process).
 * Their request and reply types are in solver-types.ts; the solver library takes and returns the same.
 */
import type { Json } from "../entities.js";
import { subjects } from "../subjects.js";
import { endpointsOf } from "./endpoint.js";
import type { TSchema } from "@sinclair/typebox";
import { anyJson, anyObject, arrayOf, count, objectOf, recordOf, string, typedSchema } from "./json-schema.js";
import type {
  AddServicesRequest,
  AddServicesResult,
  ExpandRequest,
  GrowRequest,
  GrowResult,
  LayoutRequest,
  LayoutSolution,
  Plan,
  PlanRequest,
} from "./solver-types.js";

const names = arrayOf(string);
const stats = objectOf({ steps: count, candidateLayouts: count });
const solvedNode = objectOf({
  id: string,
  clusterId: string,
  nodenum: count,
  services: names,
  hardwaretype: string,
  imagetype: string,
  properties: recordOf(anyJson),
});
const nodeLayouts = arrayOf(objectOf({ services: names, hardwaretype: string, imagetype: string, count }));
const open = (required: Record<string, TSchema>) => objectOf(required, { additionalProperties: true });

const define = endpointsOf("solver");
const s = subjects.solver;

export const solverEndpoints = {
  "solver.layout": define.internal({
    subject: s.layout,
    request: typedSchema<LayoutRequest>(
      open({ template: anyObject, provider: anyObject, catalog: anyObject, numMachines: count, clusterId: string, clusterName: string }),
    ),
    reply: typedSchema<LayoutSolution>(objectOf({
      services: names,
      dnsSuffix: string,
      nodes: arrayOf(solvedNode),
      layout: nodeLayouts,
      stats,
    })),
  }),
  "solver.addServices": define.internal({
    subject: s.addServices,
    request: typedSchema<AddServicesRequest>(open({ template: anyObject, catalog: anyObject, nodes: arrayOf(anyObject), services: names })),
    reply: typedSchema<AddServicesResult>(
      objectOf({
        services: names,
        changedNodes: arrayOf(objectOf({ id: string, nodenum: count, addedServices: names, services: names })),
        placements: arrayOf(objectOf({ service: string, nodeIds: names })),
        stats,
      }),
    ),
  }),
  "solver.grow": define.internal({
    subject: s.grow,
    request: typedSchema<GrowRequest>(
      open({ template: anyObject, provider: anyObject, catalog: anyObject, nodes: arrayOf(anyObject), numMachines: count, clusterId: string, clusterName: string }),
    ),
    reply: typedSchema<GrowResult>(objectOf({ nodes: arrayOf(solvedNode), layout: nodeLayouts, stats })),
  }),
  "solver.plan": define.internal({
    subject: s.plan,
    request: typedSchema<PlanRequest>(open({ action: string, nodes: arrayOf(anyObject), services: arrayOf(anyObject) })),
    reply: typedSchema<Plan>(objectOf({ action: string, stages: arrayOf(arrayOf(objectOf({ taskName: string, nodeId: string, service: string }))) })),
  }),
  /** Node id -> the config expanded for that node. */
  "solver.expand": define.internal({
    subject: s.expand,
    request: typedSchema<ExpandRequest>(open({ config: anyJson, nodes: arrayOf(anyObject) })),
    reply: typedSchema<Record<string, Json>>(recordOf(anyJson)),
  }),
};
