import type { PluginContext, PluginOutcome } from "../plugins/types.js";
import { nodeTarget, type CredentialSources } from "./node-target.js";
import { SshError, type SshLease, type SshPool, type SshTarget } from "./pool.js";
import { runRemote, type RemoteCommand, type RemoteOutcome } from "./remote-exec.js";

/** Where automators keep their files on a node. */
export const REMOTE_ROOT = "/var/lib/corral";
export const REMOTE_WORK_DIR = `${REMOTE_ROOT}/work`;
/** Task files live here only while their action runs (mode 0600). */
export const REMOTE_RUN_DIR = `${REMOTE_ROOT}/run`;
/** Creates the work directory and the task-file directory (root only). */
export const prepareWorkDirs = `mkdir -p ${REMOTE_WORK_DIR} ${REMOTE_RUN_DIR} && chmod 700 ${REMOTE_RUN_DIR}`;
export const remoteResourceDir = (automator: string, resourceType: string) => `${REMOTE_ROOT}/resources/${automator}/${resourceType}`;

/** A node reached over one leased connection, for the length of one task. */
export interface RemoteNode {
  readonly target: SshTarget;
  /** Runs a command as root (see `runRemote`); the login user is filled in. */
  run(cmd: Omit<RemoteCommand, "user">): Promise<RemoteOutcome>;
}

/** What remote automators and providers share: the provisioner's SSH pool and where credentials come from. */
export interface RemoteAccess {
  pool: SshPool;
  credentials: CredentialSources;
}

/**
 * Runs `fn` against the task's node: resolves its address, credential and pinned host key, leases a pooled
 * connection (reused by every command of the task) and turns SSH failures (refused, wrong key, changed host key,
 * lost connection) into a failed outcome with the reason, so the plan's retry rules apply.
 */
export async function withRemoteNode(
  access: RemoteAccess,
  ctx: PluginContext,
  what: string,
  fn: (node: RemoteNode) => Promise<PluginOutcome>,
): Promise<PluginOutcome> {
  const resolved = await nodeTarget(ctx.task, access.credentials);
  if (!resolved.ok) return { status: 1, stderr: `${what}: ${resolved.error}\n` };
  return withTarget(access.pool, resolved.target, ctx.signal, what, fn);
}

/** `withRemoteNode` for a target the caller already has (providers: hostpool cleanup, docker checks). */
export async function withTarget(
  pool: SshPool,
  target: SshTarget,
  signal: AbortSignal,
  what: string,
  fn: (node: RemoteNode) => Promise<PluginOutcome>,
): Promise<PluginOutcome> {
  let lease: SshLease;
  try {
    lease = await pool.acquire(target, signal);
  } catch (err) {
    if (err instanceof SshError) return { status: 1, stderr: `${what}: ${err.message}\n` };
    throw err;
  }
  try {
    return await fn({ target, run: (cmd) => runRemote(lease, { ...cmd, user: target.username }) });
  } catch (err) {
    if (err instanceof SshError) return { status: 1, stderr: `${what}: ${err.message}\n` };
    throw err;
  } finally {
    lease.release();
  }
}
