/**
 * Reading the command line: which command the words name, then its arguments and options, strictly (an unknown
 * option, a missing value or a wrong number of arguments is a usage error).
 */
import { parseArgs } from "node:util";
import { arity, type Command, type CommandInput, type OptionSpecs } from "./commands/command.js";
import { UsageError } from "./errors.js";

/** Options every command takes. */
export const GLOBAL_OPTIONS = {
  url: { type: "string", valueName: "url", description: "API address (`http://host:55054`, /v2 is added); env CORRAL_URL" },
  user: { type: "string", valueName: "user", description: "user id (Service-UserID); env CORRAL_USER" },
  tenant: { type: "string", valueName: "tenant", description: "tenant (Service-TenantID); env CORRAL_TENANT" },
  token: { type: "string", valueName: "token", description: "Bearer token when security is on; env CORRAL_TOKEN" },
  "token-url": { type: "string", valueName: "url", description: "token server (`http://host:55059/token`); env CORRAL_TOKEN_URL" },
  profile: { type: "string", valueName: "name", description: "profile of the profile file; env CORRAL_PROFILE" },
  output: { type: "string", short: "o", valueName: "json|yaml|table", description: "output format (default table)" },
  help: { type: "boolean", short: "h", description: "show usage" },
} as const satisfies OptionSpecs;

/** The words before the command's own arguments: every token that is not an option or a global option's value. */
function wordsOf(argv: readonly string[]): Array<{ word: string; index: number }> {
  const words: Array<{ word: string; index: number }> = [];
  const takesValue = new Set<string>();
  for (const [name, spec] of Object.entries(GLOBAL_OPTIONS)) {
    if (spec.type === "string") {
      takesValue.add(`--${name}`);
      if ("short" in spec) takesValue.add(`-${spec.short}`);
    }
  }
  for (let i = 0; i < argv.length; i++) {
    const token = argv[i] ?? "";
    if (token === "--") break;
    if (token.startsWith("-")) {
      if (takesValue.has(token)) i++;
      continue;
    }
    words.push({ word: token, index: i });
  }
  return words;
}

/** A command word also answers to its singular: `cluster` for `clusters`. */
export function wordMatches(commandWord: string, given: string): boolean {
  return commandWord === given || commandWord === `${given}s` || `${commandWord}s` === given;
}

/** The command whose words are the longest prefix of the command line's words; undefined when none. */
export function findCommand(
  commands: readonly Command[],
  argv: readonly string[],
): { command: Command; wordIndexes: number[] } | undefined {
  const words = wordsOf(argv);
  // Longest match first; among equally long ones the most words spelled exactly (`clusters plan` over `clusters plans`).
  let best: { command: Command; wordIndexes: number[]; exact: number } | undefined;
  for (const command of commands) {
    if (command.words.length > words.length) continue;
    if (!command.words.every((w, i) => wordMatches(w, words[i]?.word ?? ""))) continue;
    const exact = command.words.filter((w, i) => w === words[i]?.word).length;
    const longer = !best || command.words.length > best.command.words.length;
    if (longer || (command.words.length === best?.command.words.length && exact > best.exact)) {
      best = { command, wordIndexes: words.slice(0, command.words.length).map((w) => w.index), exact };
    }
  }
  return best && { command: best.command, wordIndexes: best.wordIndexes };
}

/** Parses the arguments of `command` (the command's words removed from argv). */
export function parseCommandInput(command: Command, argv: readonly string[], wordIndexes: readonly number[]): CommandInput {
  const rest = argv.filter((_token, i) => !wordIndexes.includes(i));
  const options = { ...GLOBAL_OPTIONS, ...command.options };
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({
      args: rest,
      options: Object.fromEntries(
        Object.entries(options).map(([name, spec]) => [
          name,
          { type: spec.type, ...("short" in spec && spec.short ? { short: spec.short } : {}), ...("multiple" in spec && spec.multiple ? { multiple: true } : {}) },
        ]),
      ),
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new UsageError(`${(err as Error).message.replace(/\. To specify a positional argument.*$/s, "")}`);
  }
  const input: CommandInput = { positionals: parsed.positionals, options: parsed.values as CommandInput["options"] };
  if (input.options["help"] === true) return input;
  const { min, max } = arity(command.args);
  const count = input.positionals.length;
  if (count < min || count > max) {
    const expected = min === max ? `${min}` : max === Number.POSITIVE_INFINITY ? `at least ${min}` : `${min} to ${max}`;
    throw new UsageError(`${command.words.join(" ")} takes ${expected} argument${expected === "1" ? "" : "s"} (${(command.args ?? []).join(" ") || "none"}), got ${count}${count > 0 ? `: ${input.positionals.join(" ")}` : ""}`);
  }
  return input;
}
