import type { NatsConnection } from "@nats-io/transport-node";
import { INSTANCE_ENV, loadConfig, metricsPortKey, type CorralConfig, type MetricsProcess } from "./config.js";
import { createLogger, type Logger, type LogLevel } from "./log.js";
import { createMetricsRegistry, type MetricsRegistry } from "./metrics/registry.js";
import { startMetricsServer, type MetricsServer } from "./metrics/server.js";
import { connectNats } from "./nats.js";
import { inboxPrefixOf, redactUrls } from "@corral/contracts";

export interface ServiceContext {
  config: CorralConfig;
  log: Logger;
  nc: NatsConnection;
  /** The service's metrics, served at `/metrics` on its own port; absent when `metrics.enabled` is false. */
  metrics?: MetricsRegistry;
}

/** What a service is to the process that runs it: a name and how to start it (each service's src/service-process.ts). */
export interface ServiceDefinition {
  /** Service name: log field, NATS connection name (`corral-<name>`) and metrics port key (`metrics.<name>.port`). */
  name: MetricsProcess;
  /** NATS connection name when it should say more than the service (a provisioner's id). @default `corral-<name>` */
  connectionName?: string;
  /** Reply subjects' first token (`ConnectOptions.inboxPrefix`). @default `inboxPrefixOf(name)`, all its NATS user may listen to */
  inboxPrefix?: string;
  /** Starts the service; `stop()` is called on SIGTERM or SIGINT. */
  start(context: ServiceContext): Promise<{ stop(): Promise<void> }>;
}

/** One service to run in this process, with the environment it reads its settings from. */
export interface ServiceMember {
  definition: ServiceDefinition;
  /** The environment this service reads (only entry files read `process.env`). */
  env: Record<string, string | undefined>;
}

export interface ServiceProcessOptions extends ServiceDefinition {
  /** The process environment (only entry files read `process.env`). */
  env: Record<string, string | undefined>;
  /** Ends the process (entry files pass `process.exit`). */
  exit: (code: number) => void;
}

export interface ServiceGroupOptions {
  /** The services this process runs, each on a NATS connection (and a NATS user) of its own. */
  members: readonly ServiceMember[];
  /** Ends the process (entry files pass `process.exit`). */
  exit: (code: number) => void;
}

/** A service started in this process. */
interface RunningService {
  stop(signal: string): Promise<void>;
}

/**
 * The life of a service process: configuration, logger, NATS connection, start, and a clean stop on SIGTERM or
 * SIGINT (stop the service, drain NATS, exit 0). A start failure is logged and exits 1.
 */
export function runServiceProcess(options: ServiceProcessOptions): Promise<void> {
  const { env, exit, ...definition } = options;
  return runServiceGroup({ members: [{ definition, env }], exit });
}

/**
 * Several services in one process (the launcher's `launcher.sharedProcess`): each as it runs alone (its own
 * configuration, logger, NATS connection and user, metrics port), started together; ready once all are, stopped
 * together on SIGTERM or SIGINT. One that cannot start ends the process with 1, and the supervisor starts it again.
 */
export async function runServiceGroup(options: ServiceGroupOptions): Promise<void> {
  let running: RunningService[];
  try {
    running = await Promise.all(options.members.map((member) => startService(member)));
  } catch {
    options.exit(1);
    return;
  }
  tellSupervisorReady();
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    await Promise.all(running.map((service) => service.stop(signal)));
    options.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));
}

/** Connects and starts one service; a failure is logged under the service's name and thrown. */
async function startService({ definition, env }: ServiceMember): Promise<RunningService> {
  const config = loadConfig({ env });
  const instance = instanceOf(env);
  const log = createLogger({ service: definition.name, ...(instance !== undefined ? { instance } : {}) }, { level: config.get("log.level") as LogLevel });
  try {
    const nc = await connectNats({
      url: config.get("nats.url"),
      name: definition.connectionName ?? `corral-${definition.name}`,
      log,
      inboxPrefix: definition.inboxPrefix ?? inboxPrefixOf(definition.name),
      replicas: config.get("nats.replicas"),
    });
    const metrics = config.get("metrics.enabled") ? createMetricsRegistry() : undefined;
    const service = await definition.start({ config, log, nc, ...(metrics ? { metrics } : {}) });
    const metricsServer = metrics ? await serveMetrics(definition.name, metrics, config, log) : undefined;
    // "started" means its subscriptions are in place on the server (writes leave at the end of the turn).
    await nc.flush();
    log.info(`${definition.name} service started`, {
      pid: process.pid,
      nats: redactUrls(config.get("nats.url")),
      metrics: metricsServer?.url ?? (metrics ? "unavailable" : "off"),
    });
    return {
      async stop(signal) {
        log.info("stopping", { signal });
        await service.stop().catch((err: unknown) => log.error("stop failed", { err }));
        await metricsServer?.stop();
        await nc.drain().catch(() => {});
      },
    };
  } catch (err) {
    log.error(`${definition.name} service failed to start`, { err });
    throw err;
  }
}

/** A supervisor that started this process with an IPC channel (the launcher) learns that it serves; then the channel closes. */
function tellSupervisorReady(): void {
  if (!process.send || !process.connected) return;
  process.send({ type: "ready" }, () => process.disconnect());
}

/** Serves the service's metrics; a port that cannot be had is logged, and the service runs on without them. */
async function serveMetrics(name: MetricsProcess, registry: MetricsRegistry, config: CorralConfig, log: Logger): Promise<MetricsServer | undefined> {
  const key = metricsPortKey(name);
  try {
    return await startMetricsServer({ registry, host: config.get("metrics.host"), port: config.get(key), log });
  } catch (err) {
    // Expected where several processes share a machine and a default port: said plainly, without a stack.
    log.warn(`cannot serve metrics on ${config.get("metrics.host")}:${config.get(key)} (${key}); running without them`, {
      reason: (err as Error).message,
    });
    return undefined;
  }
}

/** Which instance of its service this process is (`CORRAL_INSTANCE`: the launcher's 0, 1, ...; any label will do). */
function instanceOf(env: Record<string, string | undefined>): string | undefined {
  return env[INSTANCE_ENV]?.trim() || undefined;
}
