import type { Identity } from "@corral/contracts";
import { findVisibleCluster } from "../queries/visible-cluster.js";
import type { OperationContext } from "./context.js";

/**
 * `POST /clusters/{id}` with `{expireTime}`: a `lease.extend` event; the cluster machine decides whether its
 * state allows it (409), domain/lease.ts whether the new end is within the template's bounds (400).
 */
export async function extendLease(ctx: OperationContext, identity: Identity, id: string, expireTime: number): Promise<void> {
  const cluster = await findVisibleCluster(ctx.deps, identity, id);
  await ctx.actors.effects.deliverToCluster(cluster.id, [{ type: "lease.extend", expireTime, at: ctx.deps.now() }]);
}
