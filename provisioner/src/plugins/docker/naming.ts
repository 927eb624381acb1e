import { createHash } from "node:crypto";
import type { TaskMessage } from "@corral/contracts";
import type { Labels } from "./docker-api.js";

/** Labels on every container the provider makes; they are how it finds its containers again. */
export const LABEL = {
  tenant: "corral.tenant",
  cluster: "corral.cluster",
  node: "corral.node",
  managed: "corral.managed",
  /** The Corral installation (shared `installationId`) the container belongs to. */
  installation: "corral.installation",
} as const;

/** Value of `corral.managed`: the reconciler only ever touches containers carrying it. */
export const MANAGED_BY = "docker-provider";

/** A label filter term of the containers list (`key=value`). */
export const labelTerm = (key: string, value: string) => `${key}=${value}`;

export function nodeLabels(installation: string, task: Pick<TaskMessage, "tenant" | "clusterId" | "nodeId">): Labels {
  return {
    [LABEL.installation]: installation,
    [LABEL.tenant]: task.tenant,
    [LABEL.cluster]: task.clusterId,
    [LABEL.node]: task.nodeId,
    [LABEL.managed]: MANAGED_BY,
  };
}

/** The containers this installation's provider made. */
export const managedFilter = (installation: string): string[] => [
  labelTerm(LABEL.managed, MANAGED_BY),
  labelTerm(LABEL.installation, installation),
];

export const tenantFilter = (installation: string, tenant: string): string[] => [
  ...managedFilter(installation),
  labelTerm(LABEL.tenant, tenant),
];

/** The containers of one node (normally one). */
export const nodeFilter = (installation: string, tenant: string, nodeId: string): string[] => [
  ...tenantFilter(installation, tenant),
  labelTerm(LABEL.node, nodeId),
];

/** The containers of one cluster. */
export const clusterFilter = (installation: string, tenant: string, clusterId: string): string[] => [
  ...tenantFilter(installation, tenant),
  labelTerm(LABEL.cluster, clusterId),
];

const MAX_PART = 40;
const sanitize = (part: string) => part.replace(/[^a-zA-Z0-9_.-]/g, "_").slice(0, MAX_PART);

/**
 * `corral-<tenant>-<cluster>-<nodenum>-<hash>`: readable, a valid Docker name (`[a-zA-Z0-9][a-zA-Z0-9_.-]*`), and
 * unique because the hash covers the unsanitised, untruncated names. Stable, so a retried CREATE meets its
 * earlier container under the same name.
 */
export function containerName(tenant: string, clusterId: string, nodenum: number): string {
  const hash = createHash("sha256").update(`${tenant}\0${clusterId}\0${nodenum}`).digest("hex").slice(0, 8);
  return `corral-${sanitize(tenant)}-${sanitize(clusterId)}-${nodenum}-${hash}`;
}

/** `host.cluster.example` -> hostname `host`, domain name `cluster.example`. */
export function hostnameParts(fqdn: string): { hostname: string; domainname: string } {
  const dot = fqdn.indexOf(".");
  return dot < 0 ? { hostname: fqdn, domainname: "" } : { hostname: fqdn.slice(0, dot), domainname: fqdn.slice(dot + 1) };
}
