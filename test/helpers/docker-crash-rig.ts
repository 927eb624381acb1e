/**
 * What the crash tests on Docker share: a system in this process (NATS, gateway, tenancy, plugins, solver), the
 * clusters service as a child process (killed and started again by the tests), a directory for the provisioner
 * children's work directories, the stored state's reader, and the tenants whose containers are swept at the end.
 * The tests start their provisioner children themselves (they read different lines of their logs).
 */
import type { ExecutionContext } from "ava";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { openClusterState, type ClusterState } from "./cluster-state.js";
import { removeTenantContainers, type DemoTenant } from "./docker-demo.js";
import { ensureDockerForTests } from "./docker-hosts.js";
import { createProcessSet, startClustersProcess, type ProcessSet, type ServiceProcess } from "./processes.js";
import { startSystem, type TestSystem } from "./system.js";

export interface DockerCrashRig {
  sys: TestSystem;
  procs: ProcessSet;
  /** Holds the provisioner children's work directories. */
  dir: string;
  state: ClusterState;
  /** The clusters service's child process (a test that kills it puts the new one here). */
  clusters: ServiceProcess;
  /** Tenants whose containers {@link stopDockerCrashRig} removes. */
  tenants: DemoTenant[];
}

/**
 * Ensures Docker and the node image, then starts the system and the clusters service, filling `rig` (a test's
 * context) as it goes, so that {@link stopDockerCrashRig} stops what started when a later step fails.
 * `dirPrefix` names the temporary directory.
 */
export async function startDockerCrashRig(rig: Partial<DockerCrashRig>, dirPrefix: string): Promise<void> {
  await ensureDockerForTests();
  rig.tenants = [];
  rig.procs = createProcessSet();
  rig.dir = await mkdtemp(join(tmpdir(), dirPrefix));
  const sys = (rig.sys = await startSystem({ requestTimeoutMs: 5_000 }));
  rig.state = await openClusterState(sys.nc);
  rig.clusters = await rig.procs.start(() => startClustersProcess({ natsUrl: sys.nats.url }));
}

/** Stops what {@link startDockerCrashRig} started (also a rig it did not finish) and removes the tenants' containers. */
export async function stopDockerCrashRig(rig: Partial<DockerCrashRig>): Promise<void> {
  // Processes first, so no task makes a container after the sweep.
  await rig.procs?.stopAll();
  for (const tenant of rig.tenants ?? []) await removeTenantContainers(tenant.name, tenant.network);
  await rig.sys?.stop();
  if (rig.dir) await rm(rig.dir, { recursive: true, force: true });
}

/** Awaits `p`; when it rejects, logs the last output of every child process first. */
export async function dumpOnFailure<R>(t: ExecutionContext<{ procs: ProcessSet }>, p: Promise<R>): Promise<R> {
  try {
    return await p;
  } catch (err) {
    t.log(t.context.procs.dump());
    throw err;
  }
}
