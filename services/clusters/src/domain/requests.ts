/**
 * The clusters service's requests as its handlers get them: declared once in the endpoint table
 * (contracts/src/endpoints/clusters.ts), validated and decoded by serveEndpoints before a handler runs.
 */
export type { CreateClusterRequest } from "@corral/contracts";
