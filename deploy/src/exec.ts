import { spawn } from "node:child_process";

/** What a finished command left behind. */
export interface RunResult {
  /** Exit code, or null when the command was killed by a signal. */
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options for {@link run}. */
export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  /** Kill the command (SIGKILL) after this long. @default 600_000 ms */
  timeoutMs?: number;
}

/**
 * Runs a command to completion and collects its output. Never rejects because of a non-zero
 * exit; rejects only when the command cannot be started (for example ENOENT).
 */
export function run(command: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(command, args, {
      cwd: opts.cwd,
      env: opts.env ?? process.env,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 600_000);
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(err);
    });
    child.once("close", (code, signal) => {
      clearTimeout(timer);
      resolvePromise({ code, signal, stdout, stderr });
    });
  });
}

/** The last `lines` non-empty lines of a command's combined output, for error messages. */
export function outputTail(result: Pick<RunResult, "stdout" | "stderr">, lines = 15): string {
  return `${result.stdout}\n${result.stderr}`
    .split("\n")
    .map((l) => l.trimEnd())
    .filter((l) => l.length > 0)
    .slice(-lines)
    .join("\n");
}
