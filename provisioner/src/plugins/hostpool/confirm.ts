import { lookup } from "node:dns/promises";
import { isIP } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { SshError, type SshPool, type SshTarget } from "../../ssh/pool.js";
import type { PresentedHostKey } from "../../ssh/host-keys.js";
import type { PluginContext, PluginOutcome } from "../types.js";
import { nodeHost } from "./node-host.js";
import { hostTarget } from "./target.js";

export interface ConfirmOptions {
  /** How long SSH may keep refusing or not answering, ms. */
  timeoutMs: number;
  /** Pause between attempts, ms. */
  retryMs: number;
}

/**
 * CONFIRM: waits until the host answers SSH and the login works, learning (and so pinning) its host key. A host
 * that refuses or does not answer is tried again until the bound; a refused login fails at once.
 */
export async function confirmHost(pool: SshPool, ctx: PluginContext, options: ConfirmOptions): Promise<PluginOutcome> {
  const provider = ctx.task.config.provider?.name ?? "?";
  const fail = (error: string): PluginOutcome => ({ status: 1, stderr: `hostpool ${provider}: ${error}\n` });
  const found = nodeHost(ctx);
  if (!found.ok) return fail(found.error);
  const { entry, auth } = found;
  const resolved = await hostTarget(ctx, entry.address, auth);
  if (!resolved.ok) return fail(resolved.error);
  const learned = await learnWithin(pool, resolved.target, entry.host, ctx.signal, options);
  if (!learned.ok) return fail(learned.error);
  let ip = entry.address;
  if (!isIP(ip)) {
    try {
      ip = (await lookup(entry.address, { family: 4 })).address;
    } catch (err) {
      return fail(`host ${entry.host} answers SSH, but its name has no IPv4 address: ${(err as Error).message}`);
    }
  }
  return {
    status: 0,
    stdout: `hostpool ${provider}: host ${entry.host} is ready (${learned.key.type} host key pinned)\n`,
    hostname: entry.address,
    ipaddresses: { access_v4: ip, bind_v4: ip },
    result: { ssh_host_keys: { [learned.key.type]: learned.key.key } },
  };
}

type Learned = { ok: true; key: PresentedHostKey } | { ok: false; error: string };

async function learnWithin(
  pool: SshPool,
  target: SshTarget,
  host: string,
  signal: AbortSignal,
  options: ConfirmOptions,
): Promise<Learned> {
  const deadline = Date.now() + options.timeoutMs;
  let last = "";
  for (;;) {
    const remaining = deadline - Date.now();
    if (remaining <= 0) break;
    try {
      return { ok: true, key: await pool.learnHostKey(target, AbortSignal.any([signal, AbortSignal.timeout(remaining)])) };
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (!(err instanceof SshError)) throw err;
      if (err.kind !== "connect" && err.kind !== "aborted") return { ok: false, error: err.message };
      // "aborted" without our signal: the bound ran out mid-attempt; the last refusal says more.
      if (err.kind === "connect" || !last) last = err.message;
    }
    const pause = Math.min(options.retryMs, deadline - Date.now());
    if (pause > 0) await sleep(pause, undefined, { signal });
  }
  return { ok: false, error: `host ${host} did not accept SSH within ${Math.round(options.timeoutMs / 1000)} s (last: ${last})` };
}
