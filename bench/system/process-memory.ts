/**
 * Memory of a process tree from /proc (Linux): each process's resident set (RSS, what `ps` and `top` show, shared
 * pages counted in every process that maps them) and proportional set (PSS, shared pages split among the processes
 * that share them, so the sum is what the tree costs the machine), named by what the process is.
 */
import { readFileSync } from "node:fs";
import { commandLine, descendants } from "../gateway/process-cpu.js";

export interface ProcessMemory {
  pid: number;
  /** `gateway`, `provisioner`, `nats-server`, `launcher`, `npm`, `esbuild (gateway)`, ... */
  name: string;
  rssMb: number;
  pssMb: number;
}

const KB_PER_MB = 1024;
const round1 = (x: number) => Math.round(x * 10) / 10;

/** A `kB` field of a /proc file (`VmRSS:`, `Pss:`), in MB; undefined once the process is gone. */
function fieldMb(path: string, field: string): number | undefined {
  try {
    const line = readFileSync(path, "utf8")
      .split("\n")
      .find((l) => l.startsWith(`${field}:`));
    return line ? Number(/(\d+)\s*kB/.exec(line)?.[1] ?? Number.NaN) / KB_PER_MB : undefined;
  } catch {
    return undefined;
  }
}

/** What a process of a Corral tree is, from its command line (and, for helpers such as esbuild, its parent's name). */
export function processName(command: string, parentName?: string): string {
  if (/^(?:\/bin\/)?sh -c/.test(command)) return "sh";
  const service = /(?:services\/([\w-]+)|(provisioner))\/(?:src\/index\.ts|dist\/index\.js)/.exec(command);
  if (service) return service[1] ?? service[2] ?? "service";
  if (/deploy\/(?:src\/launcher\.ts|dist\/launcher\.js)/.test(command)) return "launcher";
  if (/deploy\/(?:src\/shared-process-main\.ts|dist\/shared-process-main\.js)/.test(command)) return "shared process";
  if (/deploy\/bin\/start\.mjs/.test(command)) return "start.mjs";
  const server = /\b(nats-server|redis-server)\b/.exec(command)?.[1];
  if (server) return server;
  if (/\besbuild\b/.test(command)) return parentName ? `esbuild (${parentName})` : "esbuild";
  if (/\bnpm(?:-cli\.js)?\b/.test(command)) return "npm";
  return command.split(" ")[0]?.split("/").pop() ?? "?";
}

/** The parent process id, from /proc/<pid>/stat; undefined once the process is gone. */
function parentOf(pid: number): number | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, "utf8");
    return Number(text.slice(text.lastIndexOf(")") + 2).split(" ")[1]);
  } catch {
    return undefined;
  }
}

/** `root` and every descendant, with their memory now; processes that exit meanwhile are left out. */
export function treeMemory(root: number): ProcessMemory[] {
  const pids = [root, ...descendants(root)];
  const names = new Map<number, string>();
  const out: ProcessMemory[] = [];
  // Parents before children (descendants walks down), so a helper can be named after its parent.
  for (const pid of pids) {
    const parent = parentOf(pid);
    const name = processName(commandLine(pid), parent !== undefined ? names.get(parent) : undefined);
    names.set(pid, name);
    const rssMb = fieldMb(`/proc/${pid}/status`, "VmRSS");
    const pssMb = fieldMb(`/proc/${pid}/smaps_rollup`, "Pss");
    if (rssMb === undefined || pssMb === undefined) continue;
    out.push({ pid, name, rssMb: round1(rssMb), pssMb: round1(pssMb) });
  }
  // Compiled, start.mjs runs the launcher in its own process; under tsx it only waits for a launcher child.
  if (!out.some((p) => p.name === "launcher")) for (const p of out) if (p.name === "start.mjs") p.name = "launcher";
  return out;
}

/** RSS and PSS summed over `processes`. */
export function sumOf(processes: readonly ProcessMemory[]): { rssMb: number; pssMb: number } {
  return {
    rssMb: round1(processes.reduce((s, p) => s + p.rssMb, 0)),
    pssMb: round1(processes.reduce((s, p) => s + p.pssMb, 0)),
  };
}
