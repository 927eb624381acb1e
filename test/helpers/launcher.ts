/** `npm start` (deploy/src/launcher.ts) as a child process, on a data dir and ports of the test's choosing. */
import { spawn, type ChildProcess } from "node:child_process";
import { delimiter, dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { ensureNatsServer, repoRoot } from "@corral/deploy";
import { eventually } from "./eventually.js";

export interface Launcher {
  child: ChildProcess;
  /** Every line of its stdout and stderr (its own `[launcher]` notices and its children's JSON lines). */
  lines: string[];
  exited: Promise<number | null>;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

export interface LauncherOptions {
  dataDir: string;
  apiPort: number;
  /** More environment (settings such as `CORRAL_INSTANCES_GATEWAY`). */
  env?: Record<string, string>;
  /** Local provisioners to wait for. @default 1 */
  provisioners?: number;
  /** @default 60_000 */
  timeoutMs?: number;
  /** How node runs it. @default the TypeScript sources through tsx: `--import=tsx deploy/src/launcher.ts` */
  nodeArgs?: string[];
}

/** Starts the launcher, every server port free, and waits until it says the API is up and its provisioners started. */
export async function startLauncher(options: LauncherOptions): Promise<Launcher> {
  // The repository's cached nats-server first on PATH, so a fresh data dir does not fetch another.
  const natsDir = dirname(await ensureNatsServer());
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    PATH: `${natsDir}${delimiter}${process.env["PATH"] ?? ""}`,
    CORRAL_DATA_DIR: options.dataDir,
    CORRAL_SERVER_PORT: String(options.apiPort),
    CORRAL_NATS_EMBEDDED_PORT: "0",
    CORRAL_REDIS_EMBEDDED_PORT: "0",
  };
  // Embedded servers unless the test says otherwise; no settings of the machine's.
  delete env["CORRAL_NATS_URL"];
  delete env["CORRAL_REDIS_URL"];
  delete env["CORRAL_CONFIG"];
  Object.assign(env, options.env);
  const child = spawn(process.execPath, options.nodeArgs ?? ["--import=tsx", join("deploy", "src", "launcher.ts")], {
    cwd: repoRoot,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  for (const stream of [child.stdout, child.stderr]) createInterface({ input: stream }).on("line", (l) => lines.push(l));
  const killOnExit = () => child.kill("SIGTERM");
  process.once("exit", killOnExit);
  const exited = new Promise<number | null>((resolve) =>
    child.once("exit", (code) => {
      process.removeListener("exit", killOnExit);
      resolve(code);
    }),
  );
  let stopping: Promise<number | null> | undefined;
  const launcher: Launcher = {
    child,
    lines,
    exited,
    stop: () => (stopping ??= (child.exitCode === null && child.signalCode === null && child.kill("SIGTERM"), exited)),
  };
  const timeoutMs = options.timeoutMs ?? 60_000;
  try {
    await eventually(async () => lines.some((l) => l.includes("ready: the API is up")), {
      what: "the launcher to say the API is up",
      timeoutMs,
      intervalMs: 100,
    });
    // A local provisioner registers provider type `sim` a moment later.
    const provisioners = options.provisioners ?? 1;
    await eventually(async () => lines.filter((l) => l.includes('"msg":"provisioner service started"')).length >= provisioners, {
      what: `${provisioners} local provisioner(s) to start`,
      timeoutMs: timeoutMs / 2,
      intervalMs: 100,
    });
  } catch (err) {
    await launcher.stop();
    throw new Error(`${(err as Error).message}; its output:\n${lines.join("\n")}`);
  }
  return launcher;
}
