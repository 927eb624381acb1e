/**
 * CPU time of processes from /proc (Linux): what a pipeline costs per request whatever else runs on the machine,
 * which requests per second under shared load do not tell.
 */
import { readdirSync, readFileSync } from "node:fs";

/** Kernel clock ticks per second of /proc/<pid>/stat times (USER_HZ, 100 on Linux). */
const TICKS_PER_SECOND = 100;

interface ProcStat {
  pid: number;
  ppid: number;
  /** User plus system CPU seconds so far. */
  cpuSeconds: number;
}

function stat(pid: number): ProcStat | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined; // exited
  }
  // The command name (field 2) may contain spaces and parentheses: fields count from the last ")".
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  return { pid, ppid: Number(fields[1]), cpuSeconds: (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND };
}

/** The command line of a process, arguments joined by spaces. */
export function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
  } catch {
    return "";
  }
}

/** Every live descendant of `root` (children, their children, ...). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync("/proc")) {
    const s = /^\d+$/.test(entry) ? stat(Number(entry)) : undefined;
    if (!s) continue;
    const list = children.get(s.ppid) ?? [];
    list.push(s.pid);
    children.set(s.ppid, list);
  }
  const out: number[] = [];
  const stack = [...(children.get(root) ?? [])];
  while (stack.length > 0) {
    const pid = stack.pop()!;
    out.push(pid);
    stack.push(...(children.get(pid) ?? []));
  }
  return out;
}

/** User plus system CPU seconds each process has used so far (0 once it has exited). */
export function cpuSeconds(pids: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, stat(pid)?.cpuSeconds ?? 0]));
}
