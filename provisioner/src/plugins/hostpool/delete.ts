import type { HostAllocation } from "@corral/contracts";
import { pinnedHostKeys } from "../../ssh/host-keys.js";
import { remoteStatus } from "../../ssh/remote-exec.js";
import { REMOTE_ROOT, withTarget, type RemoteNode } from "../../ssh/remote-node.js";
import type { SshPool } from "../../ssh/pool.js";
import type { PluginContext, PluginOutcome } from "../types.js";
import type { HostAllocations } from "./allocations.js";
import { nodeHost } from "./node-host.js";
import { cleanupCommand } from "./settings.js";
import { hostTarget } from "./target.js";

const CLEANUP_TIMEOUT_S = 600;
const REMOVE_TIMEOUT_S = 60;
/** A quarantine reason is shown in listings: its last characters are enough. */
const MAX_REASON_CHARS = 500;

/**
 * DELETE: runs the provider's `cleanup` command and removes what the automators left (`/var/lib/corral`), so the
 * next node sees nothing of this one, then frees the host. When that fails the node is still gone from the
 * cluster (status 0), but the host is quarantined until an admin releases it.
 */
export async function deleteHost(
  allocations: HostAllocations,
  pool: SshPool,
  ctx: PluginContext,
  now: () => number,
): Promise<PluginOutcome> {
  const { tenant, nodeId } = ctx.task;
  const provider = ctx.task.config.provider?.name ?? "?";
  const prefix = `hostpool ${provider}`;
  const allocation = await findAllocation(allocations, ctx, provider);
  if (!allocation) return { status: 0, stdout: `${prefix}: node ${nodeId} holds no host\n` };
  const { host } = allocation;
  if (allocation.state === "quarantined") return { status: 0, stdout: `${prefix}: host ${host} is already quarantined\n` };

  const free = async (stdout: string): Promise<PluginOutcome> => {
    await allocations.settle(tenant, provider, host, nodeId, { free: true }, now());
    return { status: 0, stdout: `${stdout}${prefix}: host ${host} is free again\n` };
  };
  const hostKeys = pinnedHostKeys(ctx.task.config.results?.["ssh_host_keys"]);
  // Automators only reach hosts whose key CONFIRM pinned: without one, nothing of the cluster ran there.
  if (!hostKeys) return free(`${prefix}: no host key was pinned (CONFIRM never reached ${host}), so nothing ran there\n`);

  const cleaned = await cleanHost(pool, ctx, prefix, hostKeys);
  if (ctx.signal.aborted) throw ctx.signal.reason;
  if (cleaned.status === 0) return free(cleaned.stdout ?? "");

  const reason = quarantineReason(cleaned.stderr);
  await allocations.settle(tenant, provider, host, nodeId, { quarantine: reason }, now());
  ctx.log.warn("hostpool host quarantined", { provider, host, nodeId, reason });
  return {
    status: 0,
    stdout: cleaned.stdout ?? "",
    stderr:
      `${cleaned.stderr ?? ""}${prefix}: host ${host} is quarantined (${reason}); once it is fixed, the tenant admin ` +
      `releases it with DELETE /v2/providers/${provider}/hosts/${host}/quarantine\n`,
  };
}

/** The node's allocation: the key its `providerid` names while it still holds this node, else any key that does. */
async function findAllocation(allocations: HostAllocations, ctx: PluginContext, provider: string): Promise<HostAllocation | undefined> {
  const { tenant, nodeId } = ctx.task;
  const providerid = ctx.task.config.results?.["providerid"];
  if (typeof providerid === "string") {
    const named = await allocations.read(tenant, provider, providerid);
    if (named?.nodeId === nodeId) return named;
  }
  const held = (await allocations.list(tenant, provider)).filter((a) => a.nodeId === nodeId);
  return held.find((a) => a.state === "allocated") ?? held[0];
}

async function cleanHost(
  pool: SshPool,
  ctx: PluginContext,
  prefix: string,
  hostKeys: Record<string, string>,
): Promise<PluginOutcome> {
  const found = nodeHost(ctx);
  if (!found.ok) return { status: 1, stderr: `${prefix}: ${found.error}\n` };
  const resolved = await hostTarget(ctx, found.entry.address, found.auth, hostKeys);
  if (!resolved.ok) return { status: 1, stderr: `${prefix}: ${resolved.error}\n` };
  const cleanup = cleanupCommand(ctx.task);
  return withTarget(pool, resolved.target, ctx.signal, `${prefix}: DELETE on ${found.entry.host}`, async (node) => {
    let stdout = "";
    if (cleanup) {
      const ran = await runStep(node, ctx.signal, "cleanup", cleanup, CLEANUP_TIMEOUT_S);
      stdout += ran.stdout ?? "";
      if (ran.status !== 0) return { ...ran, stdout };
    }
    const removed = await runStep(node, ctx.signal, `rm -rf ${REMOTE_ROOT}`, `rm -rf ${REMOTE_ROOT}`, REMOVE_TIMEOUT_S);
    return { ...removed, stdout: stdout + (removed.stdout ?? "") };
  });
}

async function runStep(node: RemoteNode, signal: AbortSignal, what: string, command: string, timeoutS: number): Promise<PluginOutcome> {
  const outcome = await node.run({ command, timeoutMs: timeoutS * 1000, signal });
  const { status, note } = remoteStatus(outcome, what, timeoutS);
  const stderr = outcome.stderr.text() + note + (status !== 0 && !note ? `[corral] ${what} exited with ${status}\n` : "");
  return { status, stdout: outcome.stdout.text(), stderr };
}

/** The last non-empty lines of what went wrong, bounded. */
function quarantineReason(stderr: string | undefined): string {
  const text = (stderr ?? "").trim() || "DELETE failed";
  const lines = text.split("\n").filter((l) => l.trim());
  const tail = lines.slice(-3).join("; ");
  return tail.length > MAX_REASON_CHARS ? tail.slice(-MAX_REASON_CHARS) : tail;
}
