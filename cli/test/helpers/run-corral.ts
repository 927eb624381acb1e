/**
 * Runs the real `corral` as a child process, as a user's shell would: cli/bin/corral.mjs (the TypeScript source
 * under tsx), or the bundle `npm pack` ships (`bundledCorral()`, the same source, starting in a sixth of the time,
 * for tests that run it many times on a busy machine).
 */
import { execFile, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const CORRAL_BIN = fileURLToPath(new URL("../../bin/corral.mjs", import.meta.url));

export interface CorralRun {
  code: number;
  stdout: string;
  stderr: string;
}

export interface RunOptions {
  /** Environment beside PATH and HOME; nothing of the test process's own CORRAL_* leaks in. */
  env?: Record<string, string>;
  /** Written to stdin, which is then closed. @default "" */
  input?: string;
  /** Run an executable instead (an installed `corral`). */
  bin?: string;
  /** A script run with node. @default cli/bin/corral.mjs */
  script?: string;
  /** @default 60 s */
  timeoutMs?: number;
}

export function runCorral(args: readonly string[], options: RunOptions = {}): Promise<CorralRun> {
  const env = {
    PATH: process.env["PATH"] ?? "",
    HOME: process.env["HOME"] ?? "",
    NO_COLOR: "1",
    ...options.env,
  };
  const [command, commandArgs] = options.bin ? [options.bin, [...args]] : [process.execPath, [options.script ?? CORRAL_BIN, ...args]];
  return new Promise((resolve, reject) => {
    const child = spawn(command, commandArgs, { env, stdio: ["pipe", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 60_000);
    child.on("error", reject);
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve({ code: code ?? (signal ? 128 : 1), stdout, stderr });
    });
    child.stdin.end(options.input ?? "");
  });
}

/** A folder for one test's profile file and exports; removed by the returned `remove`. */
export async function scratchDir(): Promise<{ dir: string; profile: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), "corral-cli-"));
  return { dir, profile: join(dir, "config.json"), remove: () => rm(dir, { recursive: true, force: true }) };
}

/** `{CORRAL_URL, CORRAL_USER, CORRAL_TENANT, CORRAL_CLI_CONFIG}` for a caller of a test system. */
export function corralEnv(baseUrl: string, caller: { user?: string; tenant?: string }, profile: string): Record<string, string> {
  return {
    CORRAL_URL: baseUrl,
    CORRAL_CLI_CONFIG: profile,
    ...(caller.user ? { CORRAL_USER: caller.user } : {}),
    ...(caller.tenant ? { CORRAL_TENANT: caller.tenant } : {}),
  };
}

/** A failure message showing what the run printed. */
export const shown = (run: CorralRun): string => `exit ${run.code}\n--- stdout\n${run.stdout}\n--- stderr\n${run.stderr}`;

let bundle: Promise<string> | undefined;

/** The CLI bundled as `npm pack` bundles it (cli/scripts/bundle.mjs), built once per test process. */
export function bundledCorral(): Promise<string> {
  bundle ??= (async () => {
    const dir = await mkdtemp(join(tmpdir(), "corral-bundle-"));
    process.on("exit", () => rmSync(dir, { recursive: true, force: true }));
    const outfile = join(dir, "corral.mjs");
    const script = fileURLToPath(new URL("../../scripts/bundle.mjs", import.meta.url));
    await new Promise<void>((resolve, reject) =>
      execFile(process.execPath, [script, "--outfile", outfile], (err) => (err ? reject(err) : resolve())),
    );
    return outfile;
  })();
  return bundle;
}
