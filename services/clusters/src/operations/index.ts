import type { Identity, JsonObject } from "@corral/contracts";
import type { CreateClusterRequest } from "../domain/requests.js";
import { addServices, type AddServicesRequest } from "./add-services.js";
import { configureCluster, type ConfigureRequest } from "./configure-cluster.js";
import type { OperationContext } from "./context.js";
import { createCluster } from "./create-cluster.js";
import { deleteCluster } from "./delete-cluster.js";
import { extendLease } from "./extend-lease.js";
import { runServices, type ServicesAction } from "./run-services.js";

/** What the clusters service's requests do to clusters; handlers decode a request and call one of these. */
export interface ClusterOperations {
  create(identity: Identity, req: CreateClusterRequest): Promise<string>;
  delete(identity: Identity, id: string, providerFields: JsonObject): Promise<void>;
  configure(identity: Identity, id: string, req: ConfigureRequest): Promise<void>;
  addServices(identity: Identity, id: string, req: AddServicesRequest): Promise<void>;
  runServices(identity: Identity, id: string, action: ServicesAction, service: string | undefined, providerFields: JsonObject): Promise<void>;
  extendLease(identity: Identity, id: string, expireTime: number): Promise<void>;
}

export function createClusterOperations(ctx: OperationContext): ClusterOperations {
  return {
    create: (identity, req) => createCluster(ctx, identity, req),
    delete: (identity, id, providerFields) => deleteCluster(ctx, identity, id, providerFields),
    configure: (identity, id, req) => configureCluster(ctx, identity, id, req),
    addServices: (identity, id, req) => addServices(ctx, identity, id, req),
    runServices: (identity, id, action, service, providerFields) => runServices(ctx, identity, id, action, service, providerFields),
    extendLease: (identity, id, expireTime) => extendLease(ctx, identity, id, expireTime),
  };
}

export type { AddServicesRequest, ConfigureRequest, OperationContext, ServicesAction };
export { findVisibleCluster } from "./context.js";
