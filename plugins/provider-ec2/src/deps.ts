import type { ClusterKeys, Logger, SshPool } from "@corral/provisioner/sdk";
import type { Ec2Api } from "./ec2-api.js";
import type { Ec2Settings } from "./settings.js";

/** What the provider's operations share. */
export interface Ec2Deps {
  /** The client of a provider's region, endpoint and credential (one per combination, kept for the sweeps). */
  api(settings: Ec2Settings): Ec2Api;
  clusterKeys: ClusterKeys;
  pool: SshPool;
  /** This installation's id, on every instance's and key pair's tags and in every filter. */
  installation: string;
  log: Logger;
  timing: Ec2Timing;
}

export interface Ec2Timing {
  /** How long CONFIRM waits for the instance, its sshd and its console's host keys, ms. */
  confirmTimeoutMs: number;
  /** First pause between two looks at an instance, ms; it doubles up to `maxPollMs`. */
  pollMs: number;
  maxPollMs: number;
}
