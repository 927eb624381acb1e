import { backoffMs, sleep } from "@corral/shared";
import type { HostKeys } from "./host-keys.js";
import { address, SshError, type SshPool, type SshTarget } from "./pool.js";

export interface AwaitSshOptions {
  /** Gives up after this long, ms. */
  timeoutMs: number;
  /**
   * Host keys read through a channel the provider trusts (the cloud's console output, the instance's files through
   * the cloud's API). When given, the host must present one of them and the login is made only then; without them
   * the presented key is learned (trust on first use) and `isTrustedOnFirstUse` says so.
   */
  knownHostKeys?: HostKeys;
  /** A refused login is retried too (cloud-init may install the key after sshd started). @default false */
  retryRefusedLogin?: boolean;
  /** Pause between attempts: backoff from this, ms. @default 250 */
  retryBaseMs?: number;
  /** Longest pause between attempts, ms. @default 2000 */
  retryMaxMs?: number;
  /**
   * Runs between attempts, at most once per `stillThereEveryMs`; a message ends the wait with it (the machine died or
   * went away).
   */
  stillThere?: () => Promise<string | undefined>;
  /** @default 1000 */
  stillThereEveryMs?: number;
}

/**
 * Pauses while the machine refuses connections: it is up and its sshd is about to listen, and a refusal costs
 * next to nothing, so it is asked again soon (backoff from 50 to 250 ms) instead of on the slower schedule of
 * other failures, which would leave a node waiting up to `retryMaxMs` after its sshd came up.
 */
const REFUSED_RETRY_MS = { base: 50, max: 250 };

/** The host keys to pin (`result.ssh_host_keys`), or why SSH never became usable. */
export type AwaitedSsh = { ok: true; hostKeys: HostKeys; isTrustedOnFirstUse: boolean } | { ok: false; error: string };

/**
 * CONFIRM's wait for a machine's SSH: tries to connect and log in until it works, retrying while sshd is not up
 * (refused, reset, closed before ready) and, when asked, while the login is refused; a changed host key, any other
 * failure, the machine going away or the deadline ends it. Never throws for SSH failures.
 */
export async function awaitSsh(pool: SshPool, target: SshTarget, signal: AbortSignal, options: AwaitSshOptions): Promise<AwaitedSsh> {
  // A timer of our own, not AbortSignal.timeout: inside AbortSignal.any, Node may collect a timeout signal before it
  // fires (https://github.com/nodejs/node/issues/57736), and the wait would then outlive its bound.
  const expiry = new AbortController();
  const timer = setTimeout(() => expiry.abort(), options.timeoutMs);
  try {
    return await attempts(pool, target, signal, AbortSignal.any([signal, expiry.signal]), options);
  } finally {
    clearTimeout(timer);
  }
}

async function attempts(pool: SshPool, target: SshTarget, signal: AbortSignal, deadline: AbortSignal, options: AwaitSshOptions): Promise<AwaitedSsh> {
  const where = address(target);
  let last = "";
  let isRefused = false;
  let lookedAt = -Infinity;
  for (let attempt = 1; ; attempt++) {
    try {
      if (options.knownHostKeys) {
        const lease = await pool.acquire({ ...target, hostKeys: options.knownHostKeys }, deadline);
        lease.release();
        return { ok: true, hostKeys: options.knownHostKeys, isTrustedOnFirstUse: false };
      }
      const presented = await pool.learnHostKey(target, deadline);
      return { ok: true, hostKeys: { [presented.type]: presented.key }, isTrustedOnFirstUse: true };
    } catch (err) {
      if (!(err instanceof SshError)) throw err;
      if (err.kind === "aborted" || deadline.aborted) break;
      const isRetryable = err.kind === "connect" || err.kind === "lost" || (err.kind === "auth" && options.retryRefusedLogin === true);
      if (!isRetryable) return { ok: false, error: err.message };
      last = err.message;
      isRefused = err.kind === "connect" && err.code === "ECONNREFUSED";
    }
    if (options.stillThere && performance.now() - lookedAt >= (options.stillThereEveryMs ?? 1_000)) {
      lookedAt = performance.now();
      const gone = await options.stillThere();
      if (gone) return { ok: false, error: gone };
    }
    const maxMs = options.retryMaxMs ?? 2_000;
    const pause = isRefused
      ? backoffMs(attempt, Math.min(REFUSED_RETRY_MS.base, maxMs), Math.min(REFUSED_RETRY_MS.max, maxMs))
      : backoffMs(attempt, options.retryBaseMs ?? 250, maxMs);
    if (!(await sleep(pause, deadline))) break;
  }
  if (signal.aborted) return { ok: false, error: `ssh: waiting for SSH at ${where} was aborted` };
  return { ok: false, error: `ssh: ${where} did not accept SSH within ${Math.round(options.timeoutMs / 1000)} s${last ? ` (last: ${last})` : ""}` };
}
