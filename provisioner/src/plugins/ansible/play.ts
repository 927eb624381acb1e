import { join } from "node:path";
import { shellQuote, taskFileName, type JsonObject, type ServiceActionCall, type TaskMessage, type TransientFile } from "../../sdk.js";
import type { PlayFields } from "./fields.js";
import { buildInventory, corralVariables, inventoryHost, knownHostsFile, type PlayConnection } from "./inventory.js";
import type { AnsibleTools } from "./tools.js";

/** Where one play's pieces are on the provisioner host (all readable by the tenant's sandbox). */
export interface PlayPlace {
  /** The node's directory: the play's working directory and HOME; its transient files go here. */
  nodeDir: string;
  /** The tenant's synced `playbooks`, `roles` and `collections`. */
  resourceDir(type: "playbooks" | "roles" | "collections"): string;
  /** Entries of the synced `collections` (each a collections path: `<name>/ansible_collections/<ns>/<collection>`). */
  collections: readonly string[];
}

/** How the play reaches a node, with the secrets and pins that go with it. */
export type PlayTarget =
  | { kind: "ssh"; host: string; port: number; user: string; privateKey: string; hostKeys: Record<string, string>; python?: string }
  | { kind: "local" };

/** A node the play runs on: the task's node, or with `hosts: service` each node of its step. */
export interface PlayNode {
  nodeId: string;
  target: PlayTarget;
}

/** One run of ansible-playbook, ready for the sandbox. */
export interface PlayRun {
  /** Run by `/bin/sh -c` in `place.nodeDir`. */
  command: string;
  env: Record<string, string>;
  /** Written 0600 before the run, removed after it however it ends. */
  files: TransientFile[];
  /** Made by the run itself (ansible's home, temporary files, SSH control sockets); removed after it. */
  runDir: string;
  timeoutSeconds: number;
}

const CONNECT_TIMEOUT_S = 30;
/** How long the play waits for its master connections before its tasks connect on their own. */
const MASTER_WAIT_S = CONNECT_TIMEOUT_S;

/**
 * The run of one action over `nodes`: the inventory, the variable files, a `known_hosts` of the nodes' pinned keys
 * and their private keys (transient files in the node's directory), the environment that configures
 * ansible-playbook (its configuration file is an empty one of the run) and the command.
 */
export function playRun(task: TaskMessage, action: ServiceActionCall, fields: PlayFields, place: PlayPlace, nodes: readonly PlayNode[], tools: AnsibleTools): PlayRun {
  const file = (kind: string, ext: string) => join(place.nodeDir, taskFileName(task, `ansible-${kind}`, ext));
  const runName = taskFileName(task, "ansible-run", "d");
  const runDir = join(place.nodeDir, runName);
  const files: TransientFile[] = [];
  const keyFiles = new Map<string, string>();
  const knownHosts: string[] = [];
  const masters: MasterConnection[] = [];
  const connections: Record<string, PlayConnection> = {};
  for (const { nodeId, target } of nodes) {
    if (target.kind === "local") {
      connections[nodeId] = { kind: "local" };
      continue;
    }
    let keyFile = keyFiles.get(target.privateKey);
    if (!keyFile) {
      keyFile = file(keyFiles.size === 0 ? "key" : `key${keyFiles.size + 1}`, "pem");
      keyFiles.set(target.privateKey, keyFile);
      files.push({ path: keyFile, content: target.privateKey });
    }
    knownHosts.push(knownHostsFile(target.host, target.port, target.hostKeys));
    // Relative to the node directory (the play's working directory): a socket's path must stay under 108 bytes.
    const controlPath = `${runName}/m${masters.length}`;
    masters.push({ controlPath, key: keyFile, host: target.host, port: target.port, user: target.user });
    const { host, port, user, python } = target;
    connections[nodeId] = { kind: "ssh", host, port, user, keyFile, controlPath, ...(python ? { python } : {}) };
  }
  const inventory = file("inventory", "yml");
  const config = file("config", "cfg");
  const corralVars = file("corral-vars", "json");
  const extraVars = file("extra-vars", "json");
  files.push(
    { path: inventory, content: JSON.stringify(buildInventory(task, connections), null, 1) },
    { path: corralVars, content: JSON.stringify(corralVariables(task, action)) },
    { path: extraVars, content: JSON.stringify(fields.extraVars satisfies JsonObject) },
    // Empty: every setting is in the environment, and no ansible.cfg of the host or the node directory is read.
    { path: config, content: "[defaults]\n" },
  );
  const env: Record<string, string> = {
    LANG: "C.UTF-8",
    LC_ALL: "C.UTF-8",
    ANSIBLE_CONFIG: config,
    ANSIBLE_HOME: runDir,
    ANSIBLE_LOCAL_TEMP: join(runDir, "tmp"),
    ANSIBLE_INVENTORY_ENABLED: "yaml",
    ANSIBLE_ROLES_PATH: place.resourceDir("roles"),
    ANSIBLE_COLLECTIONS_PATH: collectionsPath(place),
    ANSIBLE_PYTHON_INTERPRETER: "auto_silent",
    ANSIBLE_RETRY_FILES_ENABLED: "False",
    ANSIBLE_NOCOLOR: "True",
    ANSIBLE_TRANSFORM_INVALID_GROUP_CHARS: "ignore",
    ANSIBLE_HOST_KEY_CHECKING: "True",
    ANSIBLE_TIMEOUT: String(CONNECT_TIMEOUT_S),
  };
  let options: string[] = [];
  if (masters.length > 0) {
    const knownHostsPath = file("known-hosts", "txt");
    files.push({ path: knownHostsPath, content: knownHosts.join("") });
    options = sshOptions(knownHostsPath);
    // Each host's ControlPath is an inventory variable (ansible_ssh_common_args), the node's own master connection.
    env["ANSIBLE_SSH_ARGS"] = [...options, "-o ControlMaster=no"].join(" ");
  }
  const sshUsers = nodes.flatMap(({ target }) => (target.kind === "ssh" ? [target.user] : []));
  const args = [
    tools.ansiblePlaybook,
    "-i",
    inventory,
    "--limit",
    nodes.map(({ nodeId }) => inventoryHost(task, nodeId)).join(","),
    "-e",
    `@${corralVars}`,
    "-e",
    `@${extraVars}`,
    // A root login needs no sudo (and an image may have none), as for the other automators.
    ...(fields.become && sshUsers.some((user) => user !== "root") ? ["--become"] : []),
    ...(fields.tags.length ? ["--tags", fields.tags.join(",")] : []),
    ...(fields.skipTags.length ? ["--skip-tags", fields.skipTags.join(",")] : []),
    join(place.resourceDir("playbooks"), ...fields.playbook),
  ];
  return { command: playCommand(runDir, args, tools.nssWrapper, options, masters), env, files, runDir, timeoutSeconds: fields.timeoutSeconds };
}

/** The synced collections archives, each a collections path (`<archive>/ansible_collections/<ns>/<name>`). */
const collectionsPath = (place: PlayPlace) =>
  (place.collections.length ? place.collections : ["."]).map((c) => join(place.resourceDir("collections"), c)).join(":");

/** The SSH connection every task of the play on one node goes through. */
interface MasterConnection {
  controlPath: string;
  key: string;
  host: string;
  port: number;
  user: string;
}

/** ssh options of the play: no configuration file, only the nodes' pinned keys, the key given, never a prompt. */
function sshOptions(knownHosts: string): string[] {
  return [
    "-F /dev/null",
    `-o UserKnownHostsFile=${shellQuote(knownHosts)}`,
    "-o GlobalKnownHostsFile=/dev/null",
    "-o StrictHostKeyChecking=yes",
    "-o IdentitiesOnly=yes",
    "-o BatchMode=yes",
    `-o ConnectTimeout=${CONNECT_TIMEOUT_S}`,
    "-o ServerAliveInterval=15",
  ];
}

/**
 * The shell around ansible-playbook: makes the run directory, gives the user a passwd entry when needed (see
 * `asKnownUser`), opens a master connection to each node, runs the play and closes the connections.
 *
 * The masters run in the foreground of the play's process group (not daemonized as `ControlPersist` would), so a
 * kill at the timeout takes them down too: the nodes then hang up the tasks' terminals (Ansible runs a task on a
 * terminal unless pipelining), which ends what they started there. They open at once; the play waits for each until
 * its socket is there, it has exited (it could not connect) or the wait is over, and then every task on a node
 * without a master connects on its own and reports why it cannot.
 */
function playCommand(runDir: string, args: readonly string[], nssWrapper: string | undefined, options: readonly string[], masters: readonly MasterConnection[]): string {
  const run = shellQuote(runDir);
  const lines = [`rm -rf ${run} && mkdir -m 700 ${run} || exit 1`, asKnownUser(runDir, nssWrapper)];
  for (const [i, master] of masters.entries()) {
    const ssh = [
      "ssh",
      ...options,
      "-o ControlMaster=yes",
      "-o ControlPersist=no",
      `-o ControlPath=${shellQuote(master.controlPath)}`,
      `-i ${shellQuote(master.key)}`,
      `-p ${master.port}`,
      `-l ${shellQuote(master.user)}`,
      "-N",
      shellQuote(master.host),
    ].join(" ");
    lines.push(`${ssh} </dev/null >/dev/null 2>&1 &`, `master${i}=$!`);
  }
  if (masters.length > 0) lines.push("waited=0");
  for (const [i, master] of masters.entries()) {
    const socket = shellQuote(master.controlPath);
    lines.push(
      `while [ ! -S ${socket} ] && kill -0 "$master${i}" 2>/dev/null && [ "$waited" -lt ${MASTER_WAIT_S * 10} ]; do sleep 0.1; waited=$((waited + 1)); done`,
    );
  }
  lines.push(`${args.map(shellQuote).join(" ")} </dev/null`, "status=$?");
  const pids = masters.map((_, i) => `"$master${i}"`).join(" ");
  if (masters.length > 0) lines.push(`kill ${pids} 2>/dev/null`, `wait ${pids} 2>/dev/null`);
  lines.push('exit "$status"');
  return lines.join("\n");
}

/**
 * Gives a user without a passwd entry (a sandbox's tenant user) one through nss_wrapper, since ssh refuses to run
 * without; the entry's files are in the run directory.
 */
function asKnownUser(runDir: string, nssWrapper: string | undefined): string {
  const run = shellQuote(runDir);
  const lines = ["if ! id -un >/dev/null 2>&1; then"];
  if (nssWrapper) {
    lines.push(
      `  printf 'corral:x:%s:%s:corral tenant:%s:/bin/sh\\n' "$(id -u)" "$(id -g)" "$HOME" > ${run}/passwd`,
      `  printf 'corral:x:%s:\\n' "$(id -g)" > ${run}/group`,
      `  export LD_PRELOAD=${shellQuote(nssWrapper)} NSS_WRAPPER_PASSWD=${run}/passwd NSS_WRAPPER_GROUP=${run}/group`,
    );
  } else {
    lines.push(`  echo "ansible: the sandbox's user has no passwd entry, which ssh needs, and nss_wrapper (Debian package libnss-wrapper) is not installed" >&2`, "  exit 1");
  }
  lines.push("fi");
  return lines.join("\n");
}
