import type { Readable } from "node:stream";
import type { ClientChannel } from "ssh2";
import { OutputTail } from "./output-tail.js";
import { SshError, type SshLease } from "./pool.js";

/** How one remote command ran. */
export interface RemoteOutcome {
  /** Exit code, or undefined when it never reported one (killed by a signal, or the connection was lost). */
  exitCode: number | undefined;
  signal: string | undefined;
  stdout: OutputTail;
  stderr: OutputTail;
  isTimedOut: boolean;
  isAborted: boolean;
  /** The connection went away before the command reported its end: its outcome is unknown. */
  isConnectionLost: boolean;
}

export interface RemoteCommand {
  /**
   * A POSIX shell script, run by `/bin/sh -s` on the node as root (through `sudo -n` when the login user is not
   * root). It is sent over the channel, so nothing of it (environment values included) appears in a process
   * listing or on the node's disk.
   */
  script?: string;
  /** Instead of `script`: a command for `/bin/sh -c`, whose stdin gets `input`. */
  command?: string;
  input?: Buffer | Readable;
  /** Login user; anything but root runs through `sudo -n`. */
  user: string;
  timeoutMs: number;
  signal: AbortSignal;
  /** Shell run after the command's process group was killed (a timeout or an abort): removes what it left. */
  cleanupAfterKill?: string;
  /** Output bytes kept per stream. @default OutputTail's */
  keepBytes?: number;
  /** Between SIGTERM and SIGKILL of the remote group, s. @default 2 */
  killGraceSeconds?: number;
}

const PGID_MARK = "corral-pgid:";

/** Single-quotes for a POSIX shell. */
export const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

const asRoot = (user: string, command: string) => (user === "root" ? command : `sudo -n ${command}`);

/**
 * Runs one command on the node over a leased connection, streaming its output into bounded tails. sshd starts
 * every session in a session and process group of its own whose id is the login shell's pid; the shell reports
 * it first (on stderr), so a timeout or an abort kills the whole remote group (SIGTERM, then SIGKILL) through a
 * second channel, not only this channel. A connection lost before the exit status arrives is reported as such,
 * never as success.
 */
export function runRemote(lease: SshLease, cmd: RemoteCommand): Promise<RemoteOutcome> {
  const inner = cmd.script !== undefined ? asRoot(cmd.user, "/bin/sh -s") : asRoot(cmd.user, `/bin/sh -c ${shellQuote(cmd.command ?? "true")}`);
  const line = `echo ${PGID_MARK}$$ >&2; exec ${inner}`;
  return new Promise<RemoteOutcome>((resolve, reject) => {
    const outcome: RemoteOutcome = {
      exitCode: undefined,
      signal: undefined,
      stdout: new OutputTail(cmd.keepBytes),
      stderr: new OutputTail(cmd.keepBytes),
      isTimedOut: false,
      isAborted: false,
      isConnectionLost: false,
    };
    let pgid: number | undefined;
    let markBuffer = "";
    let hasMark = false;
    let killing: Promise<void> | undefined;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;

    const kill = (channel: { close(): void }) => {
      killing ??= killRemoteGroup(lease, cmd, pgid).finally(() => channel.close());
    };

    const attach = (channel: ClientChannel) => {
        timer = setTimeout(() => {
          outcome.isTimedOut = true;
          kill(channel);
        }, cmd.timeoutMs);
        const onAbort = () => {
          outcome.isAborted = true;
          kill(channel);
        };
        cmd.signal.addEventListener("abort", onAbort, { once: true });
        if (cmd.signal.aborted) onAbort();

        channel.on("data", (chunk: Buffer) => outcome.stdout.push(chunk));
        channel.stderr.on("data", (chunk: Buffer) => {
          if (hasMark) return outcome.stderr.push(chunk);
          markBuffer += chunk.toString("latin1");
          const nl = markBuffer.indexOf("\n");
          if (nl < 0 && markBuffer.length < 64) return;
          hasMark = true;
          const first = nl < 0 ? markBuffer : markBuffer.slice(0, nl);
          if (first.startsWith(PGID_MARK)) pgid = Number(first.slice(PGID_MARK.length)) || undefined;
          else outcome.stderr.push(Buffer.from(first + "\n", "latin1"));
          if (nl >= 0 && nl + 1 < markBuffer.length) outcome.stderr.push(Buffer.from(markBuffer.slice(nl + 1), "latin1"));
        });
        let exited = false;
        channel.on("exit", (code: number | null, signalName?: string) => {
          exited = true;
          outcome.exitCode = typeof code === "number" ? code : undefined;
          outcome.signal = signalName ?? undefined;
        });
        channel.on("close", () => {
          clearTimeout(timer);
          cmd.signal.removeEventListener("abort", onAbort);
          if (!exited && !outcome.isTimedOut && !outcome.isAborted) outcome.isConnectionLost = true;
          void Promise.resolve(killing).then(() => {
            if (settled) return;
            settled = true;
            resolve(outcome);
          });
        });
        if (cmd.script !== undefined) channel.end(cmd.script);
        else if (Buffer.isBuffer(cmd.input)) channel.end(cmd.input);
        else if (cmd.input) {
          cmd.input.on("error", (err) => {
            outcome.stderr.push(`[corral] local input failed: ${err.message}\n`);
            kill(channel);
          });
          cmd.input.pipe(channel);
        } else channel.end();
    };
    lease.exec(line, attach).catch((err: unknown) => {
      settled = true;
      reject(err instanceof SshError ? err : new SshError(String(err), "lost"));
    });
  });
}

/** Kills the remote process group through a second channel, then runs the cleanup; best effort, bounded. */
async function killRemoteGroup(lease: SshLease, cmd: RemoteCommand, pgid: number | undefined): Promise<void> {
  if (!lease.isOpen) return;
  const grace = cmd.killGraceSeconds ?? 2;
  const parts: string[] = [];
  if (pgid) parts.push(`kill -TERM -${pgid} 2>/dev/null; sleep ${grace}; kill -KILL -${pgid} 2>/dev/null`);
  if (cmd.cleanupAfterKill) parts.push(cmd.cleanupAfterKill);
  if (!parts.length) return;
  try {
    let closed!: () => void;
    const done = new Promise<void>((resolve) => (closed = resolve));
    await lease.exec(asRoot(cmd.user, `/bin/sh -c ${shellQuote(parts.join("; ") + "; true")}`), (channel) => {
      const timer = setTimeout(() => {
        channel.close();
        closed();
      }, (grace + 10) * 1000);
      channel.on("close", () => {
        clearTimeout(timer);
        closed();
      });
      channel.resume();
      channel.stderr.resume();
      channel.end();
    });
    await done;
  } catch {
    // The connection is gone: the remote sshd ends the session's processes' pipes; nothing more can be done here.
  }
}

/** The status an automator reports for a remote outcome, and a line saying why when it is not the exit code. */
export function remoteStatus(outcome: RemoteOutcome, what: string, timeoutSeconds: number): { status: number; note: string } {
  if (outcome.isConnectionLost) {
    return { status: 1, note: `[corral] ${what}: the SSH connection was lost before the command finished; its outcome is unknown\n` };
  }
  if (outcome.isTimedOut) return { status: 1, note: `[corral] ${what}: timed out after ${timeoutSeconds} s; its remote process group was killed\n` };
  if (outcome.isAborted) return { status: 1, note: `[corral] ${what}: aborted; its remote process group was killed\n` };
  if (outcome.exitCode === 0) return { status: 0, note: "" };
  if (outcome.exitCode === undefined) return { status: 1, note: `[corral] ${what}: killed by ${outcome.signal ?? "a signal"}\n` };
  return { status: outcome.exitCode, note: "" };
}
