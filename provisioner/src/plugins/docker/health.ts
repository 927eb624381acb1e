import type { HealthTarget, NodeHealthCheck } from "@corral/contracts";
import type { ProviderHealth } from "../types.js";
import type { DockerDeps } from "./containers.js";
import type { ContainerSummary } from "./docker-api.js";
import { LABEL, managedFilter } from "./naming.js";
import { dockerSettings } from "./settings.js";

/**
 * Health of docker nodes: one batch per Docker host, checked with one listing of this installation's containers
 * (stopped ones too). A node's container is the one CREATE reported (`providerid`), else the one labelled with the
 * node. Running: `healthy`; stopped, paused or restarting: `unreachable`; none: `missing`. A daemon that does not
 * answer fails the batch (its nodes are `unknown`).
 */
export function dockerHealth(deps: () => Promise<DockerDeps>, defaultSocket: string): ProviderHealth {
  const socketOf = (node: HealthTarget) => dockerSettings(node.config.provider?.provisioner ?? {}, defaultSocket).socketPath;
  return {
    batchOf: (node) => socketOf(node),
    async check(nodes, ctx) {
      if (nodes.length === 0) return [];
      const { client, installation } = await deps();
      const socket = socketOf(nodes[0]!);
      const containers = await client(socket).listContainers(managedFilter(installation), ctx.signal);
      const byId = new Map(containers.map((c) => [c.Id, c]));
      const byNode = new Map<string, ContainerSummary>();
      for (const c of containers) {
        const key = nodeKey(c.Labels?.[LABEL.tenant] ?? "", c.Labels?.[LABEL.node] ?? "");
        if (!byNode.has(key)) byNode.set(key, c);
      }
      return nodes.map((node) => {
        const reported = node.config.results?.["providerid"];
        const mine = typeof reported === "string" ? byId.get(reported) : undefined;
        const found = mine && isNodesContainer(mine, node) ? mine : byNode.get(nodeKey(node.tenant, node.nodeId));
        return containerHealth(found, node, socket);
      });
    },
  };
}

const nodeKey = (tenant: string, nodeId: string) => `${tenant}\u0000${nodeId}`;

const isNodesContainer = (c: ContainerSummary, node: HealthTarget) =>
  c.Labels?.[LABEL.tenant] === node.tenant && c.Labels?.[LABEL.node] === node.nodeId;

/** A container's state as a finding; messages name the container and its state, never a time. */
export function containerHealth(container: ContainerSummary | undefined, node: HealthTarget, socket: string): NodeHealthCheck {
  if (!container) return { state: "missing", message: `docker: node ${node.config.hostname} has no container on the Docker host at ${socket}` };
  const name = (container.Names[0] ?? container.Id.slice(0, 12)).replace(/^\//, "");
  switch (container.State) {
    case "running":
      return { state: "healthy", message: `docker: container ${name} is running` };
    case "removing":
      return { state: "missing", message: `docker: container ${name} is being removed` };
    case "exited":
    case "dead": {
      const code = /^Exited \((-?\d+)\)/.exec(container.Status)?.[1];
      return { state: "unreachable", message: `docker: container ${name} is ${container.State}${code !== undefined ? ` (exit code ${code})` : ""}` };
    }
    default:
      // created, paused, restarting
      return { state: "unreachable", message: `docker: container ${name} is ${container.State}` };
  }
}
