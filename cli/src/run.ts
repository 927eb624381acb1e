/**
 * One run of `corral`: find the command, read its input, run it, print its answer; every failure becomes a
 * message on stderr and an exit code (errors.ts).
 */
import { GLOBAL_OPTIONS, findCommand, parseCommandInput } from "./command-line.js";
import { allCommands } from "./commands/index.js";
import { stringOption, type CommandContext, type CommandInput } from "./commands/command.js";
import { ApiError, ExitCode, UnreachableError, UsageError } from "./errors.js";
import { createApiClient, type ApiClient } from "./http/api-client.js";
import { commandUsage, groupUsage, overview } from "./help.js";
import { formatResult, parseOutputFormat, type OutputFormat } from "./output/format.js";
import { profileFilePath, readProfileFile, type ProfileFile } from "./settings/profile-file.js";
import { resolveSettings, type Settings } from "./settings/settings.js";

export interface Io {
  stdout: NodeJS.WritableStream & { isTTY?: boolean };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream;
  env: NodeJS.ProcessEnv;
}

export async function runCli(argv: readonly string[], io: Io): Promise<ExitCode> {
  let format: OutputFormat = "table";
  try {
    const commands = allCommands();
    const found = findCommand(commands, argv);
    if (!found) return noCommand(argv, commands, io);
    const input = withUsageHint(found.command.words, () => parseCommandInput(found.command, argv, found.wordIndexes));
    if (input.options["help"] === true) {
      io.stdout.write(`${commandUsage(found.command)}\n`);
      return ExitCode.Ok;
    }
    format = parseOutputFormat(stringOption(input, "output"));
    const ctx = await contextOf(input, io, format);
    const outcome = await found.command.run(ctx, input);
    if (outcome.result) io.stdout.write(formatResult(outcome.result, format));
    return outcome.exitCode ?? ExitCode.Ok;
  } catch (err) {
    return reportError(err, io, format);
  }
}

function withUsageHint<T>(words: readonly string[], parse: () => T): T {
  try {
    return parse();
  } catch (err) {
    if (err instanceof UsageError) throw new UsageError(`${err.message} (corral ${words.join(" ")} -h shows the usage)`);
    throw err;
  }
}

function noCommand(argv: readonly string[], commands: ReturnType<typeof allCommands>, io: Io): ExitCode {
  const words = argv.filter((a) => !a.startsWith("-"));
  if (words.length === 0 || words[0] === "help") {
    const asked = words[0] === "help" || argv.includes("-h") || argv.includes("--help");
    (asked ? io.stdout : io.stderr).write(`${overview(commands)}\n`);
    return asked ? ExitCode.Ok : ExitCode.Usage;
  }
  const group = groupUsage(commands, words[0] ?? "");
  const message = group
    ? `corral: ${words.join(" ")}: name one of these commands:\n${group}\n`
    : `corral: unknown command "${words.join(" ")}"; corral help lists the commands\n`;
  io.stderr.write(message);
  return ExitCode.Usage;
}

async function contextOf(input: CommandInput, io: Io, format: OutputFormat): Promise<CommandContext> {
  const profilePath = profileFilePath(io.env);
  const file: ProfileFile = await readProfileFile(profilePath);
  const flags = Object.fromEntries(
    (["url", "user", "tenant", "token", "profile"] as const satisfies readonly (keyof typeof GLOBAL_OPTIONS)[]).map((k) => [k, stringOption(input, k)]),
  );
  let settings: Settings | undefined;
  let client: ApiClient | undefined;
  const resolved = () => (settings ??= resolveSettings({ ...flags, tokenUrl: stringOption(input, "token-url") }, io.env, file));
  return {
    format,
    stdout: io.stdout,
    stderr: io.stderr,
    stdin: io.stdin,
    isTTY: Boolean(io.stdout.isTTY) && format === "table",
    env: io.env,
    profilePath,
    settings: resolved,
    client: () => (client ??= createApiClient(resolved())),
  };
}

function reportError(err: unknown, io: Io, format: OutputFormat): ExitCode {
  if (err instanceof UsageError) {
    io.stderr.write(`corral: ${err.message}\n`);
    return ExitCode.Usage;
  }
  if (err instanceof ApiError) {
    if (format === "json") io.stderr.write(`${JSON.stringify(err.body)}\n`);
    else {
      const details = err.body.details ? ` ${JSON.stringify(err.body.details)}` : "";
      io.stderr.write(`corral: ${err.body.message} (HTTP ${err.status} ${err.body.error})${details}\n`);
    }
    return ExitCode.Refused;
  }
  if (err instanceof UnreachableError) {
    io.stderr.write(`corral: ${err.message}\n`);
    return ExitCode.Unreachable;
  }
  io.stderr.write(`corral: ${(err as Error).stack ?? String(err)}\n`);
  return ExitCode.Failed;
}
