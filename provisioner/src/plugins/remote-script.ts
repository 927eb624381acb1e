import { shellQuote } from "../ssh/remote-exec.js";
import { REMOTE_RUN_DIR } from "../ssh/remote-node.js";

/** A file the action needs only while it runs (task JSON, chef attributes): written 0600, removed at its end. */
export interface TransientFile {
  path: string;
  content: string;
}

export interface RemoteActionScript {
  files: TransientFile[];
  env: Record<string, string>;
  cwd: string;
  /** Run by `/bin/sh -c` with stdin from /dev/null (the script itself arrives on stdin). */
  command: string;
}

/**
 * The script an action runs on a node: writes its transient files (with the shell's builtin printf, so their
 * content never appears in a process listing and costs no process), removes them when it ends however it ends (a
 * trap; the provisioner also removes them after killing a timed-out group, when no trap runs), exports the
 * environment and runs the command in `cwd`.
 */
export function remoteActionScript(spec: RemoteActionScript): string {
  const files = spec.files.map((f) => shellQuote(f.path)).join(" ");
  const lines = [
    "umask 077",
    `[ -d ${shellQuote(REMOTE_RUN_DIR)} ] && [ -d ${shellQuote(spec.cwd)} ] || mkdir -p ${shellQuote(REMOTE_RUN_DIR)} ${shellQuote(spec.cwd)}`,
    `corral_cleanup() { rm -f ${files}; }`,
    "trap corral_cleanup EXIT",
    "trap 'corral_cleanup; exit 143' TERM INT HUP",
  ];
  for (const file of spec.files) lines.push(`printf '%s\\n' ${shellQuote(file.content)} > ${shellQuote(file.path)}`);
  for (const [name, value] of Object.entries(spec.env)) lines.push(`export ${name}=${shellQuote(value)}`);
  lines.push(`cd ${shellQuote(spec.cwd)} || exit 1`, "umask 022", `/bin/sh -c ${shellQuote(spec.command)} </dev/null`, "");
  return lines.join("\n");
}

/** The shell that removes transient files after a kill (when the script's trap could not run). */
export const removeFilesCommand = (files: TransientFile[]) => `rm -f ${files.map((f) => shellQuote(f.path)).join(" ")}`;
