import type { NatsConnection } from "@nats-io/transport-node";
import { INSTANCE_ENV, loadConfig, metricsPortKey, type CorralConfig, type MetricsProcess } from "./config.js";
import { createLogger, type Logger, type LogLevel } from "./log.js";
import { createMetricsRegistry, type MetricsRegistry } from "./metrics/registry.js";
import { startMetricsServer, type MetricsServer } from "./metrics/server.js";
import { connectNats } from "./nats.js";
import { sleep } from "./retry.js";
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
  /** Start a member that could not start again (with backoff) instead of ending the process. @default false */
  retryFailedStarts?: boolean;
}

/** A service started in this process. */
interface RunningService {
  stop(signal: string): Promise<void>;
}

/** The first delay before a member that could not start is started again; it doubles up to the last. */
const RESTART_DELAY_MS = { first: 1_000, last: 30_000 } as const;

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
 * together on SIGTERM or SIGINT (those started by then; the process exits 0 without waiting for the others). A
 * member that cannot start ends the process with 1, or with `retryFailedStarts` is started again after 1 s,
 * doubling to 30 s, while the others serve: one service's bad setting or missing backend does not take the others
 * down with it.
 */
export async function runServiceGroup(options: ServiceGroupOptions): Promise<void> {
  const running: RunningService[] = [];
  const stopping = new AbortController();
  const shutdown = async (signal: string) => {
    if (stopping.signal.aborted) return;
    stopping.abort();
    await Promise.all(running.map((service) => service.stop(signal)));
    options.exit(0);
  };
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
  process.once("SIGINT", () => void shutdown("SIGINT"));

  /** True once the member serves; false when it failed without retries or the process is stopping. */
  const startMember = async (member: ServiceMember): Promise<boolean> => {
    const log = memberLogger(member);
    for (let delay: number = RESTART_DELAY_MS.first; !stopping.signal.aborted; delay = Math.min(delay * 2, RESTART_DELAY_MS.last)) {
      try {
        const service = await startService(member, log);
        if (stopping.signal.aborted) return false;
        running.push(service);
        return true;
      } catch {
        if (!options.retryFailedStarts || stopping.signal.aborted) return false;
        log.warn(`starting the ${member.definition.name} service again in ${delay / 1000} s; the others in this process serve meanwhile`);
        await sleep(delay, stopping.signal);
      }
    }
    return false;
  };
  const started = await Promise.all(options.members.map(startMember));
  if (stopping.signal.aborted) return;
  if (!started.every(Boolean)) return options.exit(1);
  tellSupervisorReady();
}

function memberLogger({ definition, env }: ServiceMember): Logger {
  const instance = instanceOf(env);
  const level = loadConfig({ env }).get("log.level") as LogLevel;
  return createLogger({ service: definition.name, ...(instance !== undefined ? { instance } : {}) }, { level });
}

/** Connects and starts one service; a failure is logged under the service's name, its connection closed, and thrown. */
async function startService({ definition, env }: ServiceMember, log: Logger): Promise<RunningService> {
  let nc: NatsConnection | undefined;
  try {
    const config = loadConfig({ env });
    nc = await connectNats({
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
    const connection = nc;
    return {
      async stop(signal) {
        log.info("stopping", { signal });
        await service.stop().catch((err: unknown) => log.error("stop failed", { err }));
        await metricsServer?.stop();
        await connection.drain().catch(() => {});
      },
    };
  } catch (err) {
    log.error(`${definition.name} service failed to start`, { err });
    await nc?.close().catch(() => {});
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
