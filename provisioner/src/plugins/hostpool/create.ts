import { randomInt } from "node:crypto";
import type { HostAllocation } from "@corral/contracts";
import { parseHostEntry, type HostEntry } from "@corral/shared";
import type { PluginContext, PluginOutcome } from "../types.js";
import type { HostAllocations } from "./allocations.js";
import { readSettings, sshAuthOf, type HostpoolSettings } from "./settings.js";

/**
 * CREATE: the host already allocated to this node (a retried or redelivered CREATE), else the first free host,
 * in the list's order from a random offset, that this provisioner wins with a KV create.
 */
export async function createHost(allocations: HostAllocations, ctx: PluginContext, now: () => number): Promise<PluginOutcome> {
  const read = readSettings(ctx.task);
  if (!read.ok) return { status: 1, stderr: `${read.error}\n` };
  const { settings } = read;
  const { tenant, nodeId, clusterId } = ctx.task;
  const held = await allocations.list(tenant, settings.provider);
  const adopted = held.find((a) => a.nodeId === nodeId && a.state === "allocated");
  if (adopted) {
    const entry = settings.hosts.find((h) => h.host === adopted.host) ?? parseHostEntry(adopted.host);
    return allocated(ctx, settings, entry, `hostpool ${settings.provider}: node ${nodeId} already holds host ${entry.host}\n`);
  }
  const taken = new Set(held.map((a) => a.host));
  const free = settings.hosts.filter((h) => !taken.has(h.host));
  const offset = free.length ? randomInt(free.length) : 0;
  for (let i = 0; i < free.length; i++) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    const entry = free[(offset + i) % free.length]!;
    const allocation: HostAllocation = { host: entry.host, state: "allocated", clusterId, nodeId, since: now() };
    if (await allocations.claim(tenant, settings.provider, allocation)) {
      return allocated(ctx, settings, entry, `hostpool ${settings.provider}: node ${nodeId} gets host ${entry.host}\n`);
    }
  }
  return { status: 1, stderr: `${await noFreeHost(allocations, tenant, settings)}\n` };
}

function allocated(ctx: PluginContext, settings: HostpoolSettings, entry: HostEntry, stdout: string): PluginOutcome {
  const auth = sshAuthOf(entry, settings, ctx.task.config.sshuser);
  return { status: 0, stdout, result: { providerid: entry.host, "ssh-auth": { ...auth } } };
}

/** Counts the listed hosts afresh, so the message describes the pool as it is now. */
async function noFreeHost(allocations: HostAllocations, tenant: string, settings: HostpoolSettings): Promise<string> {
  const listed = new Set(settings.hosts.map((h) => h.host));
  const held = (await allocations.list(tenant, settings.provider)).filter((a) => listed.has(a.host));
  const count = (state: HostAllocation["state"]) => held.filter((a) => a.state === state).length;
  return (
    `hostpool ${settings.provider}: no free host: ${listed.size} hosts, ${count("allocated")} allocated, ` +
    `${count("quarantined")} quarantined; the cluster needs more`
  );
}
