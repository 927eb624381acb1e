/**
 * What can end a command, and the exit code each gives (docs/cli.md, Output and exit codes):
 * 0 done; 1 the operation ran and failed (a cluster job failed); 2 usage: a bad flag, argument or setting,
 * nothing was sent; 3 the server answered an error (4xx or 5xx), or an apply had refused entities;
 * 4 the server could not be reached or answered something that is not Corral's API.
 */
export const ExitCode = { Ok: 0, Failed: 1, Usage: 2, Refused: 3, Unreachable: 4 } as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** The JSON error body of every 4xx and 5xx answer. */
export interface ErrorBody {
  status: number;
  error: string;
  message: string;
  details?: Record<string, unknown>;
}

/** The command line or the settings are wrong; nothing was sent. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

/** The server answered with an error status. */
export class ApiError extends Error {
  override readonly name = "ApiError";
  constructor(
    readonly status: number,
    readonly body: ErrorBody,
  ) {
    super(body.message);
  }
}

/** The server could not be reached, or did not answer as Corral does. */
export class UnreachableError extends Error {
  override readonly name = "UnreachableError";
}

/** Reads an error body out of an answer's text; a body that is not one becomes a generic one for its status. */
export function errorBodyOf(status: number, text: string): ErrorBody {
  try {
    const parsed: unknown = JSON.parse(text);
    if (isErrorBody(parsed)) return parsed;
  } catch {
    // not JSON: described below
  }
  const excerpt = text.trim().slice(0, 200);
  return { status, error: "http_error", message: `HTTP ${status}${excerpt ? `: ${excerpt}` : ""}` };
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== "object" || value === null) return false;
  const v = value as Record<string, unknown>;
  return typeof v["status"] === "number" && typeof v["message"] === "string" && typeof v["error"] === "string";
}
