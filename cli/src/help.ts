/** Usage text: the command list, and one command's arguments and options. */
import type { Command, OptionSpecs } from "./commands/command.js";
import { GLOBAL_OPTIONS } from "./command-line.js";

export function commandUsage(command: Command): string {
  const args = (command.args ?? []).join(" ");
  const lines = [`usage: corral ${command.words.join(" ")}${args ? ` ${args}` : ""} [options]`, "", command.summary];
  if (command.options && Object.keys(command.options).length > 0) lines.push("", "options:", ...optionLines(command.options));
  lines.push("", "global options:", ...optionLines(GLOBAL_OPTIONS));
  return lines.join("\n");
}

export function overview(commands: readonly Command[]): string {
  const groups = new Map<string, Command[]>();
  for (const c of commands) {
    const group = c.words.length > 1 ? (c.words[0] ?? "") : "";
    groups.set(group, [...(groups.get(group) ?? []), c]);
  }
  const lines = ["usage: corral <command> [arguments] [options]   (corral <command> -h for its options)", ""];
  for (const [group, list] of [...groups].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(group === "" ? "commands:" : `${group}:`);
    for (const c of list) {
      const name = `${c.words.join(" ")} ${(c.args ?? []).join(" ")}`.trim();
      lines.push(`  ${name.padEnd(44)} ${c.summary}`);
    }
    lines.push("");
  }
  lines.push("global options:", ...optionLines(GLOBAL_OPTIONS), "", EXIT_CODES);
  return lines.join("\n");
}

/** The commands under a first word (`corral clusters` without a verb). */
export function groupUsage(commands: readonly Command[], word: string): string | undefined {
  const list = commands.filter((c) => c.words.length > 1 && (c.words[0] === word || c.words[0] === `${word}s`));
  if (list.length === 0) return undefined;
  return list.map((c) => `  corral ${`${c.words.join(" ")} ${(c.args ?? []).join(" ")}`.trim()}`).join("\n");
}

const EXIT_CODES = "exit codes: 0 done, 1 the operation failed (a cluster job, ...), 2 usage error, 3 the server answered an error, 4 the server could not be reached";

function optionLines(options: OptionSpecs): string[] {
  return Object.entries(options).map(([name, spec]) => {
    const short = spec.short ? `-${spec.short}, ` : "    ";
    const value = spec.type === "string" ? ` <${spec.valueName ?? "value"}>` : "";
    return `  ${short}--${name}${value}`.padEnd(40) + ` ${spec.description}`;
  });
}
