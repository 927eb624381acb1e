/** What a command is: its words, arguments and options, and what it does. */
import { UsageError, type ExitCode } from "../errors.js";
import type { ApiClient } from "../http/api-client.js";
import type { CommandResult, OutputFormat } from "../output/format.js";
import type { Settings } from "../settings/settings.js";

export interface OptionSpec {
  type: "string" | "boolean";
  short?: string;
  multiple?: boolean;
  /** Shown in the usage: `--file <path>`. */
  valueName?: string;
  description: string;
}
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;
export type OptionValues = Record<string, string | boolean | string[] | undefined>;

export interface CommandInput {
  positionals: string[];
  options: OptionValues;
}

/** Where a command writes and what it can ask for; settings and the client are made on first use. */
export interface CommandContext {
  format: OutputFormat;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  /** stdout is a terminal: colours and progress drawn in place are allowed. */
  isTTY: boolean;
  env: NodeJS.ProcessEnv;
  settings(): Settings;
  client(): ApiClient;
  /** The profile file this run reads. */
  profilePath: string;
}

export interface CommandOutcome {
  /** Printed on stdout in the chosen format. */
  result?: CommandResult;
  /** @default ExitCode.Ok */
  exitCode?: ExitCode;
}

export interface Command {
  /** `["clusters", "get"]`; a noun also answers to its singular (`cluster get`). */
  words: readonly string[];
  summary: string;
  /** Positional arguments as the usage shows them: `<id>` required, `[service]` optional, `<file>...` one or more. */
  args?: readonly string[];
  options?: OptionSpecs;
  run(ctx: CommandContext, input: CommandInput): Promise<CommandOutcome>;
}

/** The number of positionals the args allow. */
export function arity(args: readonly string[] = []): { min: number; max: number } {
  const required = args.filter((a) => a.startsWith("<")).length;
  const variadic = args.some((a) => a.endsWith("..."));
  return { min: required, max: variadic ? Number.POSITIVE_INFINITY : args.length };
}

/** A string option's value (the last one when given twice). */
export function stringOption(input: CommandInput, name: string): string | undefined {
  const value = input.options[name];
  if (Array.isArray(value)) return value.at(-1);
  return typeof value === "string" ? value : undefined;
}

export function listOption(input: CommandInput, name: string): string[] {
  const value = input.options[name];
  if (Array.isArray(value)) return value;
  return typeof value === "string" ? [value] : [];
}

export function flag(input: CommandInput, name: string): boolean {
  return input.options[name] === true;
}

/** A string option read as a whole number above 0; undefined when not given. */
export function positiveIntegerOption(input: CommandInput, name: string): number | undefined {
  const text = stringOption(input, name);
  if (text === undefined) return undefined;
  const n = Number(text);
  if (!Number.isInteger(n) || n <= 0) throw new UsageError(`--${name} ${text}: must be a whole number above 0`);
  return n;
}
