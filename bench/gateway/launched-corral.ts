/**
 * Corral as `npm start` runs it (deploy/src/launcher.ts: its own nats-server and redis-server, every service and
 * the local provisioner), in a throwaway data dir with free ports, for benchmarks.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "@corral/deploy";
import { startServiceProcess, type ServiceProcess } from "../../test/helpers/processes.js";
import { processName } from "../system/process-memory.js";
import { commandLine, descendants } from "./process-cpu.js";

export interface LaunchedCorral {
  /** `http://127.0.0.1:<port>/v2` */
  baseUrl: string;
  /** The admin's NATS URL, credentials included (from the data dir's admin.properties). */
  natsUrl: string;
  /** Process ids of the launcher's children by name (`gateway`, `shared process`, `nats-server`, ...: bench/system/process-memory.ts). */
  pids(): Record<string, number>;
  /** Stops the launcher (services, then redis and nats) and removes the data dir. */
  stop(): Promise<void>;
}

export interface LaunchOptions {
  /** Added to every process's environment (`NODE_OPTIONS` for profiling, ...). */
  env?: Record<string, string>;
}

const SUPERADMIN_HEADERS = { "Service-UserID": "admin", "Service-TenantID": "superadmin" };

/** Ready once the gateway answers and tenancy behind it has created the superadmin tenant. */
async function answersCatalogReads(baseUrl: string): Promise<boolean> {
  const res = await fetch(`${baseUrl}/providers`, { headers: SUPERADMIN_HEADERS });
  await res.arrayBuffer();
  return res.status === 200;
}

function natsUrlIn(dataDir: string): string {
  const line = readFileSync(join(dataDir, "admin.properties"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("nats.url="));
  if (!line) throw new Error(`no nats.url in ${dataDir}/admin.properties`);
  return line.slice("nats.url=".length);
}

export async function launchCorral(options: LaunchOptions = {}): Promise<LaunchedCorral> {
  const dataDir = mkdtempSync(join(tmpdir(), "corral-bench-launch-"));
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}/v2`;
  let launcher: ServiceProcess;
  try {
    launcher = await startServiceProcess({
      name: "launcher",
      entry: "deploy/src/launcher.ts",
      env: {
        CORRAL_DATA_DIR: dataDir,
        CORRAL_SERVER_PORT: String(port),
        CORRAL_NATS_EMBEDDED_PORT: "0",
        CORRAL_REDIS_EMBEDDED_PORT: "0",
        CORRAL_SECURITY_AUTH_SERVER_BIND_PORT: String(await freePort()),
        CORRAL_LOG_LEVEL: "info",
        ...options.env,
      },
      ready: () => answersCatalogReads(baseUrl),
      // As journald or a log file would take them: the services' request lines go to a file nobody reads meanwhile.
      logFile: join(dataDir, "corral.log"),
      startTimeoutMs: 120_000,
    });
  } catch (err) {
    rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return {
    baseUrl,
    natsUrl: natsUrlIn(dataDir),
    pids() {
      const out: Record<string, number> = {};
      for (const pid of descendants(launcher.pid)) {
        out[processName(commandLine(pid))] = pid;
      }
      return out;
    },
    async stop() {
      await launcher.stop(30_000);
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
