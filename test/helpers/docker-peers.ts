/**
 * A small catalog for day-two operations on real containers (`docker` provider): template `peers` lays out
 * `leader` (on at most one node) and `member` (on every node, at least 3), `member` requiring `leader`. Each
 * member's CONFIGURE writes the cluster config's `peers` (`%join(host.service.member,',')%`, expanded for its node)
 * to {@link PEERS_FILE} inside its container; its STOP and START append timed lines to {@link MEMBER_LOG}, so a
 * test reads from inside every container which peers it knows and when it was down. Used by
 * test/e2e/day-two-docker.test.ts, test/crash/day-two-kill.test.ts and bench/providers/replace.ts.
 */
import type { NatsConnection } from "@nats-io/transport-node";
import { api } from "./api.js";
import { show } from "./assertions.js";
import { createWorkerTenant } from "./clusters.js";
import type { DemoTenant } from "./docker-demo.js";
import { inContainer } from "./docker-demo.js";

export const PEERS_FILE = "/var/lib/corral-peers/member";
export const MEMBER_LOG = "/var/lib/corral-peers/member.log";
export const PEERS_TEMPLATE = "peers";
/** The same template with automatic repair (`administration.repair.auto`). */
export const PEERS_REPAIR_TEMPLATE = "peers-repair";

/** Writes the expanded `peers` of the task file to PEERS_FILE. */
const WRITE_PEERS =
  `mkdir -p /var/lib/corral-peers && python3 -c 'import json,os; c=json.load(open(os.environ["CORRAL_TASK_FILE"]))["config"]["cluster"]; ` +
  `open("${PEERS_FILE}","w").write(c["peers"]+"\\n")'`;
/** A line `<what> <task id> <ms since the epoch>` in MEMBER_LOG. */
const logLine = (what: string) => `echo "${what} $CORRAL_TASK_ID $(date +%s%3N)" >> ${MEMBER_LOG}`;
const shell = (script: string) => ({ type: "shell", fields: { script, timeout_s: "120" } });

/** The catalog as an import body: provider `local-docker` on `network`. */
export function peersCatalog(network: string, options: { repairAfterSeconds?: number } = {}): Record<string, unknown[]> {
  const template = (name: string, administration: Record<string, unknown>) => ({
    name,
    description: "leader on one node, member on every node; each member lists its peers",
    compatibility: { hardwaretypes: ["small"], imagetypes: ["debian12"], services: ["leader", "member"] },
    defaults: {
      services: ["leader", "member"],
      provider: "local-docker",
      hardwaretype: "small",
      imagetype: "debian12",
      config: { peers: "%join(host.service.member,',')%" },
    },
    constraints: {
      size: { min: 2 },
      services: { leader: { quantities: { max: 1 } }, member: { quantities: { min: 3 } } },
    },
    administration: { leaseduration: { initial: 0, max: 0, step: 0 }, ...administration },
  });
  return {
    providers: [{ name: "local-docker", description: "test containers", providertype: "docker", provisioner: { network } }],
    hardwaretypes: [{ name: "small", description: "1 CPU, 256 MB", providermap: { "local-docker": { flavor: "1x256m" } } }],
    imagetypes: [
      { name: "debian12", description: "corral/node:bookworm", providermap: { "local-docker": { image: "corral/node:bookworm", sshuser: "root" } } },
    ],
    services: [
      {
        name: "leader",
        description: "the one node the members follow",
        provisioner: { actions: { install: shell("true"), start: shell("true"), stop: shell("true") } },
      },
      {
        name: "member",
        description: "knows every member",
        dependencies: { runtime: { requires: ["leader"] } },
        provisioner: {
          actions: {
            install: shell(`mkdir -p /var/lib/corral-peers && ${logLine("install")}`),
            configure: shell(WRITE_PEERS),
            // Down from the first line of STOP to the last of START; the pause makes an overlap visible.
            stop: shell(`${logLine("stop")}; sleep 0.5`),
            start: shell(`sleep 0.2; ${logLine("start")}`),
          },
        },
      },
    ],
    clustertemplates: [
      template(PEERS_TEMPLATE, {}),
      ...(options.repairAfterSeconds !== undefined
        ? [template(PEERS_REPAIR_TEMPLATE, { repair: { auto: true, afterSeconds: options.repairAfterSeconds } })]
        : []),
    ],
  };
}

/** A tenant with workers and the peers catalog; its containers go on network `corral-test-<tenant>`. */
export async function createPeersTenant(
  sys: { baseUrl: string; nc: NatsConnection },
  prefix: string,
  options: { workers?: number; repairAfterSeconds?: number } = {},
): Promise<DemoTenant> {
  const tenant = await createWorkerTenant(sys.baseUrl, sys.nc, prefix, { workers: options.workers ?? 8 });
  const network = `corral-test-${tenant.name}`;
  const catalog = peersCatalog(network, options.repairAfterSeconds !== undefined ? { repairAfterSeconds: options.repairAfterSeconds } : {});
  const res = await api(sys.baseUrl, "POST", "/import", { ...tenant.admin, body: catalog });
  if (res.status !== 200) throw new Error(`import peers catalog: ${show(res)}`);
  return { ...tenant, network };
}

/** The peers a container's member lists (PEERS_FILE), sorted; empty when it has none. */
export async function peersIn(container: string): Promise<string[]> {
  const text = await inContainer(container, `cat ${PEERS_FILE} 2>/dev/null || true`);
  return text.trim().split(",").filter(Boolean).sort();
}

/** One STOP or START of a member, as its container logged it. */
export interface MemberEvent {
  what: "install" | "stop" | "start";
  taskId: string;
  at: number;
}

/** The member's STOP and START lines in a container (MEMBER_LOG). */
export async function memberEvents(container: string): Promise<MemberEvent[]> {
  const text = await inContainer(container, `cat ${MEMBER_LOG} 2>/dev/null || true`);
  return text
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [what = "", taskId = "", at = ""] = line.split(" ");
      return { what: what as MemberEvent["what"], taskId, at: Number(at) };
    });
}
