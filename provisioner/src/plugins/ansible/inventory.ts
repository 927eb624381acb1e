import type { HostKeys, Json, JsonObject, ServiceActionCall, TaskMessage } from "../../sdk.js";

/**
 * How the play reaches a node: over SSH (a real machine: the key file and the master connection's socket, both files
 * of the run), or `local` (a node that runs its actions on this host).
 */
export type PlayConnection =
  | { kind: "ssh"; host: string; port: number; user: string; keyFile: string; controlPath: string; python?: string }
  | { kind: "local" };

/** Groups Ansible defines itself: a service of that name gets no group of its own. */
const RESERVED_GROUPS = new Set(["all", "ungrouped"]);

/**
 * The inventory of one task, in the form of Ansible's `yaml` inventory plugin (as JSON, which is YAML): every node of
 * the cluster as a host named after its hostname; the nodes the play runs on (`connections`, by node id: the task's
 * node, or with `hosts: service` every node of its step) with how to reach them, the others without a connection;
 * and a group per service listing every node that runs it (so a template can loop over `groups['etcd']`). Every
 * host carries `corral_node_id`, `corral_hostname`, `corral_ipaddresses`, `corral_services` and `corral_nodenum`.
 * The play is limited to the nodes it runs on (`--limit`).
 */
export function buildInventory(task: TaskMessage, connections: Readonly<Record<string, PlayConnection>>): JsonObject {
  const hosts: Record<string, JsonObject> = {};
  const groups = new Map<string, string[]>();
  const others = Object.entries(task.config.nodes ?? {}).filter(([id]) => id !== task.nodeId);
  for (const [id, node] of [[task.nodeId, task.config] as const, ...others]) {
    const name = inventoryName(id, node.hostname);
    if (hosts[name]) continue;
    const address = node.ipaddresses?.["access_v4"] || node.ipaddresses?.["bind_v4"];
    const connection = connections[id];
    hosts[name] = {
      ...(address ? { ansible_host: address } : {}),
      ...(connection ? connectionVars(connection) : {}),
      corral_node_id: id,
      corral_hostname: node.hostname ?? "",
      corral_ipaddresses: { ...(node.ipaddresses ?? {}) },
      corral_services: [...(node.services ?? [])],
      corral_nodenum: node.nodenum ?? 0,
    };
    for (const service of node.services ?? []) {
      if (RESERVED_GROUPS.has(service)) continue;
      groups.set(service, [...(groups.get(service) ?? []), name]);
    }
  }
  const children: Record<string, JsonObject> = {};
  for (const [service, members] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    children[service] = { hosts: Object.fromEntries(members.sort().map((m) => [m, null])) };
  }
  return { all: { hosts: hosts as Record<string, Json>, children: children as Record<string, Json> } };
}

/** The task's node in the inventory: its hostname (the node id when it has none yet). */
export function playHost(task: TaskMessage): string {
  return inventoryName(task.nodeId, task.config.hostname);
}

/** A node of the task's cluster in the inventory: its hostname (the node id when it has none yet). */
export function inventoryHost(task: TaskMessage, nodeId: string): string {
  return nodeId === task.nodeId ? playHost(task) : inventoryName(nodeId, task.config.nodes?.[nodeId]?.hostname);
}

const inventoryName = (id: string, hostname: string | undefined) => (hostname && hostname.trim() ? hostname.trim() : id);

function connectionVars(connection: PlayConnection): JsonObject {
  if (connection.kind === "local") {
    return { ansible_connection: "local", ansible_python_interpreter: "{{ ansible_playbook_python }}" };
  }
  return {
    ansible_connection: "ssh",
    ansible_host: connection.host,
    ansible_port: connection.port,
    ansible_user: connection.user,
    ansible_ssh_private_key_file: connection.keyFile,
    // The node's own master connection (play.ts); ssh takes the first ControlPath it is given, and the run's
    // ssh_args name none.
    ansible_ssh_common_args: `-o ControlPath=${connection.controlPath}`,
    // Found by BOOTSTRAP: spares every play Ansible's interpreter discovery, a round trip to the node.
    ...(connection.python ? { ansible_python_interpreter: connection.python } : {}),
  };
}

/**
 * The play's own variables (passed as extra variables, so a playbook's defaults never shadow them): `corral_config`,
 * the cluster config with its macros expanded for this node; `corral_task`, which task this is.
 */
export function corralVariables(task: TaskMessage, action: ServiceActionCall): JsonObject {
  return {
    corral_config: task.config.cluster ?? {},
    corral_task: {
      name: task.taskName,
      service: action.service,
      cluster_id: task.clusterId,
      node_id: task.nodeId,
      hostname: task.config.hostname ?? "",
    },
  };
}

/**
 * A `known_hosts` file holding exactly the node's pinned host keys, under the address and port ssh connects to
 * (`[host]:port` when the port is not 22), so `StrictHostKeyChecking=yes` accepts the node and nothing else.
 */
export function knownHostsFile(host: string, port: number, keys: HostKeys): string {
  const pattern = port === 22 ? host : `[${host}]:${port}`;
  return Object.entries(keys)
    .map(([type, key]) => `${pattern} ${type} ${key}\n`)
    .join("");
}
