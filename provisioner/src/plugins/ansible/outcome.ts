/** One failed task of a play, as the default callback printed it. */
export interface PlayFailure {
  task: string;
  host: string;
  unreachable: boolean;
  message: string;
}

const TASK_HEADER = /^(?:TASK|RUNNING HANDLER) \[(.*)\] \**\s*$/;
/** `fatal: [host]: FAILED! => {...}`, `fatal: [host]: UNREACHABLE! => {...}`, `failed: [host] (item=x) => {...}` */
const FAILURE = /^(?:fatal|failed): \[([^\]]+)\](?: \(item=.*?\))?(?:: (FAILED|UNREACHABLE)!)? => (.*)$/;
const MESSAGE_CHARS = 400;

/**
 * The failed tasks of a play, from the default callback's output: the task header before each `fatal:` or
 * `failed:` line, and the result's message (with the end of a command's stderr). Failures a play ignored
 * (`...ignoring`) are left out.
 */
export function playFailures(stdout: string): PlayFailure[] {
  const failures: PlayFailure[] = [];
  let task = "";
  const lines = stdout.split("\n");
  for (const [i, line] of lines.entries()) {
    const header = TASK_HEADER.exec(line);
    if (header) {
      task = header[1]!;
      continue;
    }
    const failure = FAILURE.exec(line);
    if (!failure || lines[i + 1]?.startsWith("...ignoring")) continue;
    failures.push({ task, host: failure[1]!, unreachable: failure[2] === "UNREACHABLE", message: resultMessage(failure[3]!) });
  }
  return failures.filter((f, i) => !failures.some((g, j) => j > i && g.task === f.task && g.host === f.host && g.message === f.message));
}

function resultMessage(raw: string): string {
  let message = raw;
  try {
    const result = JSON.parse(raw) as Record<string, unknown>;
    const parts = [firstAndLast(result["msg"]), lastLine(result["stderr"]) ?? lastLine(result["module_stderr"])].filter(
      (p): p is string => typeof p === "string" && p.trim() !== "",
    );
    if (parts.length) message = parts.join(": ");
  } catch {
    // not JSON: the line as printed
  }
  message = message.replace(/\s+/g, " ").trim();
  return message.length > MESSAGE_CHARS ? `${message.slice(0, MESSAGE_CHARS)}...` : message;
}

/**
 * A multi-line message as its lead and its last line: ssh's banner of a changed host key comes between "Failed to
 * connect to the host via ssh" and the decisive "Host key verification failed."
 */
function firstAndLast(value: unknown): string | undefined {
  if (typeof value !== "string") return undefined;
  const lines = value.split("\n").filter((l) => l.trim());
  if (lines.length < 2) return value;
  const lead = lines[0]!.includes(": ") ? lines[0]!.slice(0, lines[0]!.indexOf(": ")) : lines[0]!;
  return `${lead.trim()}: ${lines.at(-1)!.trim()}`;
}

const lastLine = (value: unknown) =>
  typeof value === "string"
    ? value
        .trim()
        .split("\n")
        .filter((l) => l.trim())
        .at(-1)
    : undefined;

/** The lines that end a failed action's stderr: which task failed where, and why. */
export function failureSummary(failures: readonly PlayFailure[]): string {
  return failures
    .map((f) =>
      f.unreachable
        ? `[corral] ansible: ${f.host} was unreachable at task "${f.task}": ${f.message}\n`
        : `[corral] ansible: task "${f.task}" failed on ${f.host}: ${f.message}\n`,
    )
    .join("");
}
