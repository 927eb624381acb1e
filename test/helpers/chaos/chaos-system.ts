/**
 * The system the chaos suite attacks: a three-node JetStream cluster, a redis-server, every service as child
 * processes (two instances each) and provisioner child processes that record their side effects. The servers ask
 * for no credentials: what each NATS user may do is the bus-permissions tests' business, and faults are this
 * suite's. Each process sits
 * in a {@link Slot} the fault injector kills, pauses and restarts; `stop()` ends everything and removes its files.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { NatsConnection } from "@nats-io/transport-node";
import { freePort, prepareBus, type ServerHandle } from "@corral/deploy";
import { connectNats } from "@corral/shared";
import { startNatsCluster, type NatsClusterHandle } from "../nats-cluster.js";
import { createProcessSet, startServiceProcess, type ProcessSet, type ServiceProcess, type ServiceProcessOptions } from "../processes.js";
import { startRedis } from "../servers.js";

/** The services run as processes, two instances each (auth is left out: security is off, so it only idles). */
export const CHAOS_SERVICES = ["gateway", "tenancy", "clusters", "solver", "plugins", "metrics"] as const;

export interface ChaosSystemOptions {
  /** Instances of each service. @default 2 */
  instances?: number;
  /** Provisioner processes. @default 3 */
  provisioners?: number;
  /** Worker loops of each provisioner. @default 8 */
  provisionerCapacity?: number;
  /** How long each recorder action takes, ms. @default 0 */
  actionMs?: number;
  /** NATS nodes. @default 3 */
  natsNodes?: number;
}

/** One process the injector may kill or pause: the current incarnation, and how to start the next. */
export interface Slot {
  readonly name: string;
  readonly kind: "service" | "provisioner";
  current(): ServiceProcess;
  /** Starts a new incarnation (after a kill) and waits until it is ready. */
  restart(): Promise<void>;
}

export interface ChaosSystem {
  nats: NatsClusterHandle;
  redis(): ServerHandle;
  /** Kills redis-server (SIGKILL) and waits for it to exit. */
  killRedis(): Promise<void>;
  /** Starts redis-server again on its port (empty: it does not persist). */
  restartRedis(): Promise<void>;
  /** A connection for the checker. */
  nc: NatsConnection;
  /** `http://127.0.0.1:<port>/v2` of each gateway instance. */
  baseUrls: string[];
  services: Slot[];
  provisioners: Slot[];
  provisionerIds: string[];
  /** The side-effect record every provisioner appends to. */
  recordFile: string;
  stop(): Promise<void>;
}

export async function startChaosSystem(options: ChaosSystemOptions = {}): Promise<ChaosSystem> {
  const instances = options.instances ?? 2;
  const dir = await mkdtemp(join(tmpdir(), "corral-chaos-"));
  const procs: ProcessSet = createProcessSet();
  let nats: NatsClusterHandle | undefined;
  let redis: ServerHandle | undefined;
  let nc: NatsConnection | undefined;
  const stop = async () => {
    // A paused process ignores SIGTERM until it runs again.
    for (const p of procs.all()) if (p.isAlive()) signal(p.pid, "SIGCONT");
    await procs.stopAll(5_000);
    await nc?.close().catch(() => {});
    await nats?.stop();
    await redis?.stop();
    await rm(dir, { recursive: true, force: true });
  };
  try {
    nats = await startNatsCluster({ nodes: options.natsNodes ?? 3 });
    const redisPort = await freePort();
    redis = await startRedis({ port: redisPort });
    nc = await connectNats({ url: nats.url, name: "chaos-checker" });
    await prepareBus(nc);

    const slotOf = async (kind: Slot["kind"], options: ServiceProcessOptions): Promise<Slot> => {
      let current = await procs.start(() => startServiceProcess(options));
      return {
        name: options.name,
        kind,
        current: () => current,
        async restart() {
          current = await procs.start(() => current.respawn());
        },
      };
    };
    const common = {
      CORRAL_NATS_URL: nats.url,
      CORRAL_REDIS_URL: redis.url,
      CORRAL_METRICS_ENABLED: "false",
      CORRAL_DATA_DIR: join(dir, "data"),
      CORRAL_LOG_LEVEL: "warn",
    };
    const services: Slot[] = [];
    const baseUrls: string[] = [];
    for (const service of CHAOS_SERVICES) {
      for (let i = 0; i < instances; i++) {
        const port = service === "gateway" ? await freePort() : undefined;
        if (port !== undefined) baseUrls.push(`http://127.0.0.1:${port}/v2`);
        const env: Record<string, string> = {
          ...common,
          // Readiness is read from the "service started" line, logged at info; request lines stay out (warn).
          CORRAL_LOG_LEVEL: "info",
          ...(port !== undefined ? { CORRAL_SERVER_HOST: "127.0.0.1", CORRAL_SERVER_PORT: String(port), CORRAL_LOG_LEVEL: "warn" } : {}),
        };
        services.push(
          await slotOf("service", {
            name: `${service}-${i}`,
            entry: `services/${service}/src/index.ts`,
            env,
            ...(port !== undefined ? { ready: () => answers(`http://127.0.0.1:${port}/v2/tenants`) } : { readyMsg: `${service} service started` }),
          }),
        );
      }
    }
    const recordFile = join(dir, "side-effects.jsonl");
    const provisionerIds = Array.from({ length: options.provisioners ?? 3 }, (_, i) => `chaos-p${i}`);
    const provisioners = await Promise.all(
      provisionerIds.map((id) =>
        slotOf("provisioner", {
          name: id,
          entry: "test/helpers/chaos/recording-provisioner.ts",
          env: {
            ...common,
            CORRAL_LOG_LEVEL: "info",
            CORRAL_REDIS_URL: "",
            CORRAL_PROVISIONER_ID: id,
            CORRAL_PROVISIONER_CAPACITY: String(options.provisionerCapacity ?? 8),
            CORRAL_PROVISIONER_WORKDIR: join(dir, id),
            CORRAL_PROVISIONER_STOP_TIMEOUT_MS: "5000",
            CORRAL_CHAOS_RECORD: recordFile,
            CORRAL_CHAOS_ACTION_MS: String(options.actionMs ?? 0),
          },
          readyMsg: "provisioner service started",
        }),
      ),
    );
    const system: ChaosSystem = {
      nats,
      redis: () => redis!,
      async killRedis() {
        process.kill(redis!.pid, "SIGKILL");
        await redis!.exited;
        await redis!.stop();
      },
      async restartRedis() {
        redis = await startRedis({ port: redisPort });
      },
      nc,
      baseUrls,
      services,
      provisioners,
      provisionerIds,
      recordFile,
      stop,
    };
    return system;
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Sends a signal without waiting for anything (SIGSTOP, SIGCONT); a process already gone is no error. */
export function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // gone already
  }
}

/** Whether a URL answers at all (any HTTP status). */
async function answers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1_000) });
    return true;
  } catch {
    return false;
  }
}
