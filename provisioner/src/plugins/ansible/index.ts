import { readdir, rm, stat } from "node:fs/promises";
import { join } from "node:path";
import {
  defaultSandbox,
  exitStatus,
  nodeTarget,
  remoteStatus,
  resourceDir,
  runsActionsLocally,
  shellQuote,
  withRemoteNode,
  type AutomatorPlugin,
  type LocalSandbox,
  type PluginContext,
  type PluginOutcome,
  type RemoteAccess,
  type ServiceActionCall,
  type TaskMessage,
  type TenantSandbox,
} from "../../sdk.js";
import { DEFAULT_TIMEOUT_S, readPlayFields, type PlayFields } from "./fields.js";
import { stepNodeTask, stepPlay } from "./hosts.js";
import { failureSummary, playFailures } from "./outcome.js";
import { playRun, type PlayNode, type PlayPlace, type PlayTarget } from "./play.js";
import { ANSIBLE_SPEC } from "./spec.js";
import { findAnsibleTools, MISSING_ANSIBLE, type AnsibleTools } from "./tools.js";

export { ANSIBLE_SPEC } from "./spec.js";

export interface AnsibleAutomatorOptions {
  /** How real nodes are reached (the provisioner's `host.ssh`): their address, key and pinned host keys. */
  remote?: RemoteAccess;
  /** Where plays run: the tenant's sandbox on the provisioner host. @default defaultSandbox() */
  sandbox?: LocalSandbox;
  /** Timeout of an action without a `timeout_s` field, in seconds. @default 1800 */
  defaultTimeoutSeconds?: number;
  /** PATH searched for `ansible-playbook` (system directories are searched too). @default process.env.PATH */
  pathEnv?: string;
}

const REMOTE_CHECK_TIMEOUT_S = 30;
const REMOVE_TIMEOUT_MS = 60_000;
/** The node's result where BOOTSTRAP records the node's python3, which plays then use without discovering it. */
const PYTHON_RESULT = "ansible_python";
const ABSOLUTE_PATH = /^\/[A-Za-z0-9._\/-]+$/;
type ResourceType = "playbooks" | "roles" | "collections";

/**
 * The `ansible` automator: each service action runs `ansible-playbook` on the provisioner host, in the tenant's
 * sandbox, against the task's node (with `hosts: service`, the first node's task against every node of its step, see
 * hosts.ts): over SSH with the node's key and only its pinned host keys (a `known_hosts` of them,
 * `StrictHostKeyChecking=yes`); a node whose provider declares `capabilities.localActions` (`sim`) is played with
 * `connection: local` in the task's node directory. Nothing but python3 is needed on the node, and nothing is copied
 * to it but what the play's own modules send. The inventory, variables and keys are files of the run in the node's
 * directory (0600, the tenant's), removed when it ends however it ends (see docs/providers.md, "Ansible").
 */
export function createAnsibleAutomator(options: AnsibleAutomatorOptions = {}): AutomatorPlugin {
  const sandbox = options.sandbox ?? defaultSandbox();
  const defaultTimeoutSeconds = options.defaultTimeoutSeconds ?? DEFAULT_TIMEOUT_S;
  let found: Promise<AnsibleTools | undefined> | undefined;
  const tools = async () => {
    const present = await (found ??= findAnsibleTools(options.pathEnv ?? process.env["PATH"]));
    if (!present) found = undefined;
    return present;
  };
  const failed = (message: string): PluginOutcome => ({ status: 1, stderr: `ansible: ${message}\n` });

  const tenantBox = async (ctx: PluginContext): Promise<{ box: TenantSandbox; dir: string } | { outcome: PluginOutcome }> => {
    const box = await sandbox.forActions(ctx.workDir, ctx.tenant);
    if ("refused" in box) return { outcome: failed(box.refused) };
    return { box, dir: await box.nodeDir(ctx.task.clusterId, ctx.task.nodeId) };
  };

  /**
   * A node (the task's, or one of its step as `stepNodeTask` makes it) over SSH (key and pinned keys), `local` for a
   * node of this host, or why the play cannot reach it.
   */
  const playTarget = async (ctx: PluginContext, task: TaskMessage): Promise<PlayTarget | { outcome: PluginOutcome }> => {
    if (runsActionsLocally(ctx)) return { kind: "local" };
    if (!options.remote) return { outcome: failed(`node ${task.config.hostname} is a real machine, and this provisioner was started without SSH access`) };
    const resolved = await nodeTarget(task, options.remote.credentials);
    if (!resolved.ok) return { outcome: failed(resolved.error) };
    const { target } = resolved;
    if (!target.privateKey) {
      return { outcome: failed(`node ${task.config.hostname} logs in with a password; plays log in with a key (ssh-auth cluster_key or key_resource)`) };
    }
    if (!target.hostKeys) return { outcome: failed(`node ${task.config.hostname} has no pinned host key (CONFIRM records it)`) };
    const python = task.config.results?.[PYTHON_RESULT];
    return {
      kind: "ssh",
      host: target.host,
      port: target.port,
      user: target.username,
      privateKey: String(target.privateKey),
      hostKeys: target.hostKeys,
      ...(typeof python === "string" && ABSOLUTE_PATH.test(python) ? { python } : {}),
    };
  };

  /** The nodes the play runs on, with how to reach each, or the outcome of a task that plays nothing. */
  const playNodes = async (ctx: PluginContext, fields: PlayFields): Promise<PlayNode[] | { outcome: PluginOutcome }> => {
    let nodeIds = [ctx.task.nodeId];
    if (fields.hosts === "service") {
      const step = stepPlay(ctx.task);
      if (step.role === "refused") return { outcome: failed(step.error) };
      if (step.role === "played") return { outcome: { status: 0, stdout: step.note } };
      nodeIds = step.nodeIds;
    }
    const targets = await Promise.all(nodeIds.map((id) => playTarget(ctx, stepNodeTask(ctx.task, id))));
    const nodes: PlayNode[] = [];
    for (const [i, target] of targets.entries()) {
      if ("outcome" in target) return target;
      nodes.push({ nodeId: nodeIds[i]!, target });
    }
    return nodes;
  };

  const run = async (ctx: PluginContext, action: ServiceActionCall, fields: PlayFields, found: AnsibleTools): Promise<PluginOutcome> => {
    const nodes = await playNodes(ctx, fields);
    if ("outcome" in nodes) return nodes.outcome;
    const node = await tenantBox(ctx);
    if ("outcome" in node) return node.outcome;
    const dirOf = (type: ResourceType) => resourceDir(ctx.workDir, ctx.tenant, "automatortypes", ANSIBLE_SPEC.name, type);
    const playbook = join(dirOf("playbooks"), ...fields.playbook);
    if (!(await stat(playbook).then((s) => s.isFile(), () => false))) {
      return failed(`playbook ${fields.playbook.join("/")} is not synced to this provisioner (stage and sync the playbooks archive ${fields.playbook[0]})`);
    }
    const collections = (await readdir(dirOf("collections")).catch(() => [])).sort();
    const place: PlayPlace = { nodeDir: node.dir, resourceDir: dirOf, collections };
    const play = playRun(ctx.task, action, fields, place, nodes, found);
    try {
      for (const file of play.files) await node.box.writeFile(file.path, file.content);
      const ran = await node.box.run({ command: play.command, cwd: node.dir, env: play.env, timeoutMs: play.timeoutSeconds * 1000, signal: ctx.signal });
      let stderr = ran.stderr;
      if (ran.exitCode !== 0) stderr += failureSummary(playFailures(ran.stdout));
      if (ran.isTimedOut) stderr += `[corral] ansible: timed out after ${play.timeoutSeconds} s; the play was killed\n`;
      else if (ran.signal) stderr += `[corral] ansible: killed by ${ran.signal}\n`;
      return { status: exitStatus(ran), stdout: ran.stdout, stderr };
    } finally {
      await Promise.all(play.files.map((file) => rm(file.path, { force: true })));
      // As the tenant's user, in its sandbox: the play's processes wrote there, and a tree a tenant can still change
      // is never walked by the provisioner itself.
      await node.box.run({
        command: `rm -rf ${shellQuote(play.runDir)}`,
        cwd: node.dir,
        env: {},
        timeoutMs: REMOVE_TIMEOUT_MS,
        signal: new AbortController().signal,
      });
    }
  };

  return {
    kind: "automatortypes",
    spec: ANSIBLE_SPEC,
    async bootstrap(ctx) {
      if (!(await tools())) return { status: 1, stderr: MISSING_ANSIBLE };
      if (runsActionsLocally(ctx)) {
        const node = await tenantBox(ctx);
        return "outcome" in node ? node.outcome : { status: 0, stdout: `node directory ${node.dir} ready for plays\n` };
      }
      if (!options.remote) return failed(`node ${ctx.task.config.hostname} is a real machine, and this provisioner was started without SSH access`);
      return withRemoteNode(options.remote, ctx, "ansible bootstrap", async (node) => {
        const check = await node.run({ command: "command -v python3", timeoutMs: REMOTE_CHECK_TIMEOUT_S * 1000, signal: ctx.signal });
        if (check.exitCode !== 0) {
          const { note } = remoteStatus(check, "ansible bootstrap", REMOTE_CHECK_TIMEOUT_S);
          return { status: 1, stderr: note || `ansible: python3 is not installed on ${ctx.task.config.hostname}; plays need it on the node\n` };
        }
        const python = check.stdout.text().trim();
        return {
          status: 0,
          stdout: `python3 at ${python} on ${node.target.host}; plays run from this provisioner\n`,
          ...(ABSOLUTE_PATH.test(python) ? { result: { [PYTHON_RESULT]: python } } : {}),
        };
      });
    },
    async runAction(ctx, action) {
      const fields = readPlayFields(action, defaultTimeoutSeconds);
      if (!fields.ok) return { status: 1, stderr: fields.error };
      const present = await tools();
      if (!present) return { status: 1, stderr: MISSING_ANSIBLE };
      return run(ctx, action, fields.value, present);
    },
  };
}
