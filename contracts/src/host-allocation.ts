/** What bucket `corral_hostpool` holds for a host of a `hostpool` provider that a node has taken. */

export type HostState = "allocated" | "quarantined";

/** The value of an allocation key. */
export interface HostAllocation {
  host: string;
  state: HostState;
  clusterId: string;
  nodeId: string;
  /** ms: when the state was entered. */
  since: number;
  /** Why a host is quarantined. */
  reason?: string;
}
