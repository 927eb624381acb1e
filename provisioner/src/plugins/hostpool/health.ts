import { HostListError, mapLimit, parseHostEntry } from "@corral/shared";
import type { HealthTarget, NodeHealthCheck } from "@corral/contracts";
import { pinnedHostKeys } from "../../ssh/host-keys.js";
import { parseSshAuth } from "../../ssh/node-target.js";
import { probeSsh } from "../../ssh/probe.js";
import type { HealthCheckContext, ProviderHealth } from "../types.js";

export interface HostpoolHealthOptions {
  /** Longest one host's probe may take, ms. */
  probeTimeoutMs: number;
  /** Hosts probed at once within a batch. */
  concurrency: number;
}

/**
 * Health of hostpool nodes: one batch per tenant's provider; each host is probed (`probeSsh`: TCP, the SSH greeting
 * and the key exchange with the key CONFIRM pinned; no login). Answering: `healthy`; refused, silent or presenting
 * another key: `unreachable`. A pool host never counts as `missing`: Corral did not make it and cannot tell it is gone.
 */
export function hostpoolHealth(options: HostpoolHealthOptions): ProviderHealth {
  return {
    batchOf: (node) => `${node.tenant}\u0000${node.config.provider?.name ?? ""}`,
    check: (nodes, ctx) => mapLimit(nodes, options.concurrency, (node) => hostHealth(node, ctx, options.probeTimeoutMs)),
  };
}

async function hostHealth(node: HealthTarget, ctx: HealthCheckContext, timeoutMs: number): Promise<NodeHealthCheck> {
  const { results } = node.config;
  const providerid = results?.["providerid"];
  const hostKeys = pinnedHostKeys(results?.["ssh_host_keys"]);
  if (typeof providerid !== "string" || !hostKeys) {
    return { state: "unknown", message: `hostpool: node ${node.config.hostname} has no host and pinned host key (CREATE and CONFIRM record them)` };
  }
  let entry;
  try {
    entry = parseHostEntry(providerid);
  } catch (err) {
    if (err instanceof HostListError) return { state: "unknown", message: `hostpool: ${err.message}` };
    throw err;
  }
  const port = parseSshAuth(results?.["ssh-auth"])?.port ?? entry.port;
  const probe = await probeSsh({ host: entry.address, port, hostKeys }, { timeoutMs, signal: ctx.signal });
  if (probe.ok) return { state: "healthy", message: `hostpool: host ${entry.host} answers SSH with its pinned host key` };
  if (probe.kind === "aborted") return { state: "unknown", message: `hostpool: the check of host ${entry.host} was aborted` };
  return { state: "unreachable", message: `hostpool: host ${entry.host}: ${probe.message}` };
}
