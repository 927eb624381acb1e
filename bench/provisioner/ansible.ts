/**
 * The `ansible` automator's cost per action against the `shell` automator's, on real machines: sshd containers of
 * the node image reached as any node is (a synced `ssh_keys` resource, the host key pinned). Measures, one node at
 * a time: an empty play (no task: ansible-playbook's start, the inventory and the master connection: the fixed
 * cost of a play), a no-op play (one `command: "true"` task on the node) and the `shell` action `true`; then no-op
 * plays on 20 nodes at several concurrencies (actions per second). CPU per play is this process's children's
 * (ansible-playbook, ssh, the sandbox's launcher), read from /proc/self/stat.
 *
 * Run: node --import=tsx bench/provisioner/ansible.ts -> bench/results/ansible.json
 * Env: BENCH_HOSTS (20), BENCH_SERIAL (20 actions of each kind one at a time), BENCH_ACTIONS (60 per concurrency),
 *      BENCH_CONCURRENCY ("2,4,8"), BENCH_SMOKE (1: print only, write nothing; for a quick check on a busy machine)
 */
import { readFileSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { randomUUID } from "node:crypto";
import { join } from "node:path";
import { ensureAnsible } from "@corral/deploy";
import type { TaskMessage } from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import { createAnsibleAutomator, createShellAutomator, resourceDir, type PluginContext, type PluginOutcome, type ServiceActionCall } from "@corral/provisioner";
import { SshPool } from "@corral/provisioner/testing";
import { cpuWindow, latencySummary, loadSnapshot, log, machine, round, startSshFleet, totalMemoryGiB, writeResult, type SshFleet } from "../real-machines/lib.js";
import { envNumber as env } from "../env.js";

const HOSTS = env("BENCH_HOSTS", 20);
const SERIAL = env("BENCH_SERIAL", 20);
const ACTIONS = env("BENCH_ACTIONS", 60);
const CONCURRENCY = (process.env["BENCH_CONCURRENCY"] ?? "2,4,8").split(",").map(Number);
const SMOKE = process.env["BENCH_SMOKE"] === "1";

const EMPTY_PLAY = "- hosts: all\n  gather_facts: false\n  tasks: []\n";
const NOOP_PLAY = '- hosts: all\n  gather_facts: false\n  tasks:\n    - ansible.builtin.command: "true"\n      changed_when: false\n';
const play = (file: string): ServiceActionCall => ({ name: "START", service: "noop", fields: { playbook: `bench/${file}` } });
const SHELL_TRUE: ServiceActionCall = { name: "START", service: "noop", fields: { script: "true" } };

/** CPU seconds of this process's waited-for children (utime + stime of /proc/self/stat's cutime and cstime). */
function childrenCpuSeconds(): number {
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1]!.split(" ");
  // After the command's closing parenthesis: state is field 3, so cutime (16) and cstime (17) are at 13 and 14.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

function context(fleet: SshFleet, i: number, automator: string): PluginContext {
  const base = fleet.task(i, `00000001-001-${i}-${randomUUID().slice(0, 4)}`);
  // As after BOOTSTRAP, which records the node's python3 for the plays.
  const results = automator === "ansible" ? { ...base.config.results, ansible_python: "/usr/bin/python3" } : base.config.results;
  const task: TaskMessage = { ...base, config: { ...base.config, automators: [automator], results } };
  return { task, tenant: task.tenant, workDir: fleet.workDir, provisionerId: "bench", workerId: `w${i}`, signal: new AbortController().signal, log: silentLogger };
}

type Runner = (i: number) => Promise<PluginOutcome>;

async function drive(label: string, count: number, concurrency: number, runOne: Runner, nodes: readonly string[]) {
  const latencies: number[] = [];
  const failures: string[] = [];
  let next = 0;
  const cpu = cpuWindow(nodes);
  const children0 = childrenCpuSeconds();
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const s = performance.now();
        const out = await runOne(i);
        latencies.push(performance.now() - s);
        if (out.status !== 0) failures.push(`${out.status}: ${(out.stderr ?? "").trim().slice(-300)}`);
      }
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const used = cpu();
  const childrenSeconds = childrenCpuSeconds() - children0;
  const result = {
    actions: count,
    concurrency,
    actionsPerSecond: round(count / seconds, 2),
    seconds: round(seconds, 2),
    latencyMs: latencySummary(latencies),
    failures: failures.length,
    ...(failures.length ? { firstFailures: [...new Set(failures)].slice(0, 3) } : {}),
    cpu: {
      ...used,
      childProcessesCpuMsPerAction: round((childrenSeconds / count) * 1000, 1),
      nodeContainersCpuMsPerAction: round((used.nodeContainersCpuSeconds / count) * 1000, 1),
    },
  };
  log(`${label}: ${JSON.stringify(result)}`);
  return result;
}

const load0 = await loadSnapshot();
const tools = await ensureAnsible();
log(`starting ${HOSTS} sshd containers (load ${load0.loadAverage1m5m15m.join(" ")}, ${load0.runningContainers} containers running)`);
const fleet = await startSshFleet(HOSTS, "corral-bench-ansible");
const ids = fleet.hosts.map((h) => h.id);
try {
  const playbooks = join(resourceDir(fleet.workDir, fleet.task(0, "x").tenant, "automatortypes", "ansible", "playbooks"), "bench");
  await mkdir(playbooks, { recursive: true });
  await writeFile(join(playbooks, "empty.yml"), EMPTY_PLAY);
  await writeFile(join(playbooks, "noop.yml"), NOOP_PLAY);

  const pool = new SshPool({ log: silentLogger });
  const access = { pool, credentials: { workDir: fleet.workDir, clusterKeys: undefined } };
  const ansible = createAnsibleAutomator({ remote: access });
  const shell = createShellAutomator({ remote: access });
  const onOneNode = (i: number) => i * HOSTS; // the fleet's task(i) picks host i % HOSTS: always host 0
  const emptyPlay: Runner = (i) => ansible.runAction(context(fleet, onOneNode(i), "ansible"), play("empty.yml"));
  const noopPlay: Runner = (i) => ansible.runAction(context(fleet, onOneNode(i), "ansible"), play("noop.yml"));
  const shellTrue: Runner = (i) => shell.runAction(context(fleet, onOneNode(i), "shell"), SHELL_TRUE);
  const noopAnywhere: Runner = (i) => ansible.runAction(context(fleet, i, "ansible"), play("noop.yml"));

  await drive("warm-up", 2, 1, noopPlay, ids);
  await drive("warm-up shell", 5, 1, shellTrue, ids);
  const serialEmpty = await drive("empty play, one at a time", SERIAL, 1, emptyPlay, ids);
  const serialNoop = await drive("no-op play, one at a time", SERIAL, 1, noopPlay, ids);
  const serialShell = await drive("shell `true`, one at a time", SERIAL, 1, shellTrue, ids);
  const concurrent = [];
  for (const c of CONCURRENCY) concurrent.push(await drive(`no-op plays on ${HOSTS} nodes, concurrency ${c}`, ACTIONS, c, noopAnywhere, ids));
  await shell.close?.();

  const best = concurrent.reduce((a, b) => (b.actionsPerSecond > a.actionsPerSecond ? b : a));
  const result = {
    date: new Date().toISOString(),
    machine: `${machine()}; ${totalMemoryGiB()} GiB; the sshd containers run on the same cores`,
    loadBefore: load0,
    loadAfter: await loadSnapshot(),
    configuration: {
      hosts: HOSTS,
      ansiblePlaybook: tools.ansiblePlaybook,
      image: "corral/node:bookworm",
      emptyPlay: EMPTY_PLAY,
      noopPlay: NOOP_PLAY,
      shellAction: "shell automator runAction, script `true`, over the provisioner's pooled ssh2 connection",
      ansibleAction: "ansible automator runAction: ansible-playbook in the tenant's sandbox, one OpenSSH master connection per play",
    },
    summary: {
      emptyPlayMsMedian: serialEmpty.latencyMs.p50,
      noopPlayMsMedian: serialNoop.latencyMs.p50,
      shellTrueMsMedian: serialShell.latencyMs.p50,
      perTaskOnTheNodeMs: round(serialNoop.latencyMs.p50 - serialEmpty.latencyMs.p50, 1),
      playCpuMsOnTheProvisioner: serialNoop.cpu.childProcessesCpuMsPerAction,
      noopPlaysPerSecondOn20Nodes: best.actionsPerSecond,
      atConcurrency: best.concurrency,
    },
    serial: { emptyPlay: serialEmpty, noopPlay: serialNoop, shellTrue: serialShell },
    concurrent,
  };
  if (SMOKE) console.log(JSON.stringify(result.summary, null, 2));
  else writeResult("ansible.json", result);
} finally {
  await fleet.stop();
}
process.exit(0);
