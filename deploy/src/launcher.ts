/**
 * `npm start`: runs Corral on this machine. Starts the embedded nats-server and redis-server
 * (unless `CORRAL_NATS_URL` / `CORRAL_REDIS_URL` point elsewhere) with the installation's credentials,
 * creates the streams and buckets, then starts every service and the provisioner as supervised child
 * processes (`instances.<process>` of each, each restarted on its own; the services `launcher.sharedProcess` names
 * together in one, shared-process.ts). Each step prints one line. Ctrl-C or SIGTERM stops the services first, then redis and nats,
 * and exits 0.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { connectNats, loadConfig } from "@corral/shared";
import { describeReplicaChange, prepareBus } from "./bus-setup.js";
import { isCorralService, mapServices } from "./service-access.js";
import { writeConnectionFiles } from "./connection-files.js";
import { currentRuntime, nodeArgsOf } from "./compiled.js";
import { collectWhenIdle } from "./idle-gc.js";
import { isDockerAvailable } from "./docker.js";
import type { EmbeddedServers } from "./embedded-servers.js";
import { startEmbeddedServers } from "./embedded-servers.js";
import type { LauncherConfig } from "./launcher-config.js";
import { loadLauncherConfig } from "./launcher-config.js";
import { countOf, instanceEnv, instancesOf, type Instance } from "./instances.js";
import { assignMetricsPorts, metricsPortEnv, type MetricsPort } from "./metrics-ports.js";
import { repoRoot } from "./paths.js";
import { launchUnits, SHARED_PROCESS_ENTRY, SHARED_PROCESS_ENV, sharedProcessName, type SharedMember } from "./shared-process.js";
import { apiServes } from "./api-probe.js";
import { serviceNodeEnv } from "./servers.js";
import type { Supervisor } from "./process-supervisor.js";
import { createSupervisor } from "./process-supervisor.js";
import type { ServiceEntry } from "./service-discovery.js";
import { discoverServices } from "./service-discovery.js";

const notice = (msg: string): void => console.log(`[launcher] ${msg}`);
const warn = (msg: string): void => console.error(`[launcher] ${msg}`);

let servers: Promise<EmbeddedServers> | undefined;
let supervisor: Supervisor | undefined;
let exiting: Promise<void> | undefined;

/** Stops services, then redis and nats, then exits; later calls (repeated signals) are no-ops. */
function shutdown(code: number, reason: string): void {
  if (exiting) {
    notice(`${reason}; already stopping`);
    return;
  }
  notice(reason);
  exiting = (async () => {
    try {
      await supervisor?.stopAll();
      const running = await servers?.catch(() => undefined);
      await running?.stop();
      notice("stopped");
    } catch (err) {
      warn(`error while stopping: ${(err as Error).message}`);
      code = code || 1;
    }
    process.exit(code);
  })();
}

async function main(): Promise<void> {
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
    process.on(signal, () => shutdown(0, `received ${signal}; stopping services, then redis and nats`));
  }
  // npm start runs node with --expose-gc: the launcher too gives memory back once it idles.
  collectWhenIdle();
  const config = loadLauncherConfig();
  notice(`data dir ${config.dataDir}; running ${currentRuntime === "compiled" ? "the compiled JavaScript (dist/)" : "the TypeScript sources through tsx"}`);
  servers = startEmbeddedServers(config, notice);
  const { natsUrl, provisionerNatsUrl, serviceNatsUrls, redisUrl, crashed } = await servers;
  if (exiting) {
    return;
  }
  void crashed.then((name) => shutdown(1, `${name} died unexpectedly; stopping everything`));
  const files = await writeConnectionFiles(config.dataDir, {
    services: mapServices((service) => ({ natsUrl: serviceNatsUrls[service], redisUrl })),
    provisioner: { natsUrl: provisionerNatsUrl },
    admin: { natsUrl },
  });
  notice(`connection settings for services and provisioners started by hand: ${files.gateway}, ..., ${files.provisioner}`);
  notice("creating the JetStream streams, buckets and object stores");
  const nc = await connectNats({ url: natsUrl, name: "corral-launcher", replicas: config.natsReplicas });
  try {
    const onRetry = (err: Error) => notice(`the NATS cluster cannot place the streams yet (${err.message}); retrying`);
    for (const change of await prepareBus(nc, { onRetry, auditRetention: config.auditRetention })) {
      notice(describeReplicaChange(change));
    }
  } finally {
    await nc.close();
  }
  if (exiting) {
    return;
  }
  const services = await discoverServices(repoRoot);
  supervisor = createSupervisor({ onNotice: notice });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    CORRAL_NATS_URL: natsUrl,
    CORRAL_REDIS_URL: redisUrl,
    CORRAL_DATA_DIR: config.dataDir,
    CORRAL_SERVER_PORT: String(config.serverPort),
    CORRAL_NATS_SYNCALWAYS: String(config.jetstreamSyncAlways),
    // With the local provisioner on, the superadmin tenant gets workers so a fresh install can create a cluster.
    ...(config.localProvisioner && !process.env["CORRAL_TENANCY_SUPERADMIN_WORKERS"] ? { CORRAL_TENANCY_SUPERADMIN_WORKERS: "4" } : {}),
  };
  // The provisioner logs in as the provisioner user and has no business with Redis.
  const provisionerEnv: NodeJS.ProcessEnv = { ...env, CORRAL_NATS_URL: provisionerNatsUrl };
  delete provisionerEnv["CORRAL_REDIS_URL"];
  const toStart = services.filter((s) => s.name !== "provisioner" || config.localProvisioner);
  const count = countOf(config.instances);
  notice(toStart.length ? `starting ${toStart.map((s) => (count(s.name) > 1 ? `${s.name} x${count(s.name)}` : s.name)).join(", ")}` : "no services to start yet");
  const instances = instancesOf(toStart, count);
  const units = launchUnits(instances, config.sharedServices);
  for (const unit of units) {
    if (unit.kind === "shared") notice(`${listed(unit.instances.map((i) => i.name))} share one process (launcher.sharedProcess)`);
  }
  const sharedConfig = loadConfig({ env: process.env });
  const metricsPorts = await assignMetricsPorts(sharedConfig, instances);
  announceMetrics(metricsPorts, sharedConfig.get("metrics.host"));
  const metricsEnvOf = (instance: Instance) => {
    const port = metricsPorts.find((m) => m.name === instance.name);
    return port ? metricsPortEnv(port) : {};
  };
  // Each service logs in as its own user (bus-permissions.ts); one without a row there gets the admin's.
  const serviceEnvOf = (name: string) => (name === "provisioner" ? provisionerEnv : isCorralService(name) ? { ...env, CORRAL_NATS_URL: serviceNatsUrls[name] } : env);
  for (const unit of units) {
    if (unit.kind === "alone") {
      const { instance } = unit;
      const serviceEnv = serviceEnvOf(instance.service.name);
      supervisor.start({
        name: instance.name,
        command: process.execPath,
        // As this launcher runs: compiled JavaScript under `npm start`, the TypeScript sources when run through tsx.
        args: nodeArgsOf(instance.service.entry),
        cwd: repoRoot,
        env: serviceNodeEnv({ ...serviceEnv, ...instanceEnv(instance, serviceEnv, config.dataDir), ...metricsEnvOf(instance) }),
      });
      continue;
    }
    const members: SharedMember[] = unit.instances.map((instance) => ({
      service: instance.service.name,
      definition: instance.service.definition!,
      env: { CORRAL_NATS_URL: serviceEnvOf(instance.service.name)["CORRAL_NATS_URL"] ?? natsUrl },
    }));
    // No admin login in the shared process: each member connects with its own.
    const { CORRAL_NATS_URL: _admin, ...withoutAdmin } = env;
    supervisor.start({
      name: sharedProcessName(unit.instances),
      command: process.execPath,
      args: nodeArgsOf(SHARED_PROCESS_ENTRY),
      cwd: repoRoot,
      env: serviceNodeEnv({
        ...withoutAdmin,
        ...Object.assign({}, ...unit.instances.map((i) => ({ ...instanceEnv(i, env, config.dataDir), ...metricsEnvOf(i) }))),
        [SHARED_PROCESS_ENV]: JSON.stringify(members),
      }),
    });
  }
  announceApi(config, services);
}

/** `a, b and c`. */
const listed = (names: readonly string[]): string => (names.length < 2 ? names.join("") : `${names.slice(0, -1).join(", ")} and ${names.at(-1)}`);

/** Prints each process's metrics port (and which ports were taken), or that metrics are off. */
function announceMetrics(ports: readonly MetricsPort[], host: string): void {
  if (ports.length === 0) {
    notice("metrics: off (metrics.enabled=false)");
    return;
  }
  const shown = host === "0.0.0.0" || host === "::" ? "localhost" : host;
  notice(`metrics (Prometheus, http://${shown}:<port>/metrics): ${ports.map((m) => `${m.name} ${m.port}`).join(", ")}`);
  const moved = ports.filter((m) => m.configured !== undefined);
  if (moved.length > 0) {
    notice(`metrics ports taken or set to 0, given free ones instead: ${moved.map((m) => `${m.name} ${m.configured} -> ${m.port}`).join(", ")}`);
  }
}

/** Prints where the API listens, and again once every service said it is ready and the gateway serves requests. */
function announceApi(config: LauncherConfig, services: ServiceEntry[]): void {
  const url = `http://localhost:${config.serverPort}/v2`;
  if (!services.some((s) => s.name === "gateway")) {
    notice(`API: ${url} (no gateway service yet, so nothing listens there)`);
    return;
  }
  void (async () => {
    // Ready means every service answers, not only the gateway's port: a create right after would find no clusters service.
    await supervisor?.allReady(120_000).catch((err: unknown) => warn(`${(err as Error).message}; the API may answer 503 until they are`));
    for (let i = 0; i < 600 && !exiting; i++) {
      if (await apiServes(config.serverPort)) {
        notice(`ready: the API is up at ${url}`);
        notice(
          (await isDockerAvailable())
            ? "Docker is available: `npm run quickstart` creates a real three-node cluster of containers"
            : "Docker is not available here: `npm run quickstart` falls back to simulated machines (provider sim)",
        );
        return;
      }
      await sleep(100);
    }
    if (!exiting) {
      warn(`the gateway does not serve ${url}: see its log lines above (another program on port ${config.serverPort}? set server.port, e.g. CORRAL_SERVER_PORT=55080)`);
    }
  })();
}

main().catch((err: unknown) => {
  warn(`failed to start: ${err instanceof Error ? err.message : String(err)}`);
  shutdown(1, "stopping what was started");
});
