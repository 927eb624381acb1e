/**
 * What a node container costs before CONFIRM can succeed, measured outside Corral for comparison with the CREATE
 * and CONFIRM task times: from `docker run` to the first SSH greeting (polled every 25 ms), and the host key
 * generation the image's entrypoint does at every start (`ssh-keygen -A`: RSA 3072, ECDSA and Ed25519) against
 * Ed25519 alone (the type the provisioner's SSH client negotiates and CONFIRM pins).
 */
import { setTimeout as sleep } from "node:timers/promises";
import { createTestNetwork, dockerExec, ensureDockerForTests, readBanner } from "../../test/helpers/docker-hosts.js";
import { docker } from "../../test/helpers/docker-demo.js";
import { containerCpuSeconds, latencySummary } from "./lib.js";

const KEYGEN_ALL = "rm -f /etc/ssh/ssh_host_*; ssh-keygen -A >/dev/null";
const KEYGEN_ED25519 = "rm -f /etc/ssh/ssh_host_*; ssh-keygen -q -t ed25519 -N '' -f /etc/ssh/ssh_host_ed25519_key";

/** Wall ms and the container's CPU ms (its cgroup: every process of the exec) of one command run in it. */
async function timedExec(id: string, command: string): Promise<{ wallMs: number; cpuMs: number }> {
  const cpu0 = containerCpuSeconds([id]);
  const t0 = performance.now();
  const out = await dockerExec(id, ["sh", "-c", command]);
  if (out.exitCode !== 0) throw new Error(`${command}: exit ${out.exitCode}: ${out.stderr}`);
  return { wallMs: performance.now() - t0, cpuMs: (containerCpuSeconds([id]) - cpu0) * 1000 };
}

/** ms from `docker run -d` to an SSH greeting on the container's address, and the container's CPU ms by then. */
async function runToBanner(image: string, network: string): Promise<{ ms: number; cpuMs: number }> {
  const started = performance.now();
  const id = (await docker(["run", "-d", "--label", "corral.test=1", "--network", network, image])).trim();
  try {
    const format = `{{(index .NetworkSettings.Networks ${JSON.stringify(network)}).IPAddress}}`;
    const ip = (await docker(["inspect", "-f", format, id])).trim();
    for (;;) {
      if ((await readBanner(ip, 22, 500).catch(() => "")).startsWith("SSH-")) {
        return { ms: performance.now() - started, cpuMs: containerCpuSeconds([id]) * 1000 };
      }
      if (performance.now() - started > 60_000) throw new Error(`container ${id.slice(0, 12)}: no SSH greeting within 60 s`);
      await sleep(25);
    }
  } finally {
    await docker(["rm", "-f", "-v", id]).catch(() => "");
  }
}

export async function measureNodeStartup(samples: number, image: string) {
  await ensureDockerForTests();
  const network = await createTestNetwork(`corral-bench-startup-${process.pid}`);
  try {
    const boots: Array<{ ms: number; cpuMs: number }> = [];
    const all: Array<{ wallMs: number; cpuMs: number }> = [];
    const ed25519: Array<{ wallMs: number; cpuMs: number }> = [];
    for (let i = 0; i < samples; i++) {
      boots.push(await runToBanner(image, network.name));
      const id = (await docker(["run", "-d", "--label", "corral.test=1", "--entrypoint", "sleep", image, "infinity"])).trim();
      try {
        all.push(await timedExec(id, KEYGEN_ALL));
        ed25519.push(await timedExec(id, KEYGEN_ED25519));
      } finally {
        await docker(["rm", "-f", "-v", id]).catch(() => "");
      }
    }
    return {
      samples,
      dockerRunToSshGreeting: { wallMs: latencySummary(boots.map((b) => b.ms)), containerCpuMs: latencySummary(boots.map((b) => b.cpuMs)) },
      keygenAllTypes: { wallMs: latencySummary(all.map((x) => x.wallMs)), cpuMs: latencySummary(all.map((x) => x.cpuMs)) },
      keygenEd25519Only: { wallMs: latencySummary(ed25519.map((x) => x.wallMs)), cpuMs: latencySummary(ed25519.map((x) => x.cpuMs)) },
      note: "one container at a time on the shared machine; keygenAllTypes is `ssh-keygen -A` (RSA 3072, ECDSA, Ed25519), which corral-node-init runs at every start; wall includes docker exec",
    };
  } finally {
    await network.remove().catch(() => undefined);
  }
}
