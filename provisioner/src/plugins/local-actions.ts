import type { PluginContext } from "./types.js";

/**
 * Whether the task's node runs its actions on the provisioner host (in the tenant's sandbox) rather than over SSH:
 * its provider type, as this provisioner carries it, declares `capabilities.localActions` (`sim` does). A provider
 * type this provisioner does not carry is a real machine: its actions go over SSH.
 */
export function runsActionsLocally(ctx: Pick<PluginContext, "providerSpec">): boolean {
  return ctx.providerSpec?.capabilities?.localActions === true;
}
