import { actionTimeoutSeconds, pathSegment, type JsonObject, type PreparedAction, type ServiceActionCall } from "../../sdk.js";

/** An action's fields, read and checked before anything runs. */
export interface PlayFields {
  /** Path segments inside the playbooks directory; the first is the archive's (escaped as a path segment). */
  playbook: string[];
  tags: string[];
  skipTags: string[];
  extraVars: JsonObject;
  become: boolean;
  timeoutSeconds: number;
  /** `node`: the play is limited to the task's node; `service`: one play over every node of the step (hosts.ts). */
  hosts: PlayHosts;
}

export type PlayHosts = "node" | "service";

export const DEFAULT_TIMEOUT_S = 1800;

/** Reads `playbook`, `tags`, `skip_tags`, `extra_vars`, `become`, `timeout_s` and `hosts`, or says which one is wrong. */
export function readPlayFields(action: ServiceActionCall, defaultTimeoutSeconds = DEFAULT_TIMEOUT_S): PreparedAction<PlayFields> {
  const fail = (message: string): PreparedAction<PlayFields> => ({
    ok: false,
    error: `ansible: the action ${action.name} of service ${action.service}: ${message}\n`,
  });
  const fields = action.fields as Record<string, unknown>;
  const playbook = playbookPath(text(fields["playbook"]));
  if (typeof playbook === "string") return fail(playbook);
  const extraVars = jsonObject(fields["extra_vars"]);
  if (typeof extraVars === "string") return fail(extraVars);
  const become = flag(fields["become"], true);
  if (become === undefined) return fail(`become must be true or false, got "${text(fields["become"])}"`);
  const timeout = actionTimeoutSeconds(fields["timeout_s"], defaultTimeoutSeconds);
  if (typeof timeout === "string") return fail(timeout);
  const hosts = text(fields["hosts"]) || "node";
  if (hosts !== "node" && hosts !== "service") return fail(`hosts must be node or service, got "${hosts}"`);
  return {
    ok: true,
    value: { playbook, tags: list(fields["tags"]), skipTags: list(fields["skip_tags"]), extraVars, become, timeoutSeconds: timeout, hosts },
  };
}

function text(value: unknown): string {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value.trim() : typeof value === "object" ? JSON.stringify(value) : String(value);
}

/** `web/site.yml` as segments; never absolute, never `..` or `.`, so it stays inside the synced playbooks. */
function playbookPath(raw: string): string[] | string {
  if (!raw) return "it has no playbook field";
  const segments = raw.split("/").filter((s) => s !== "");
  if (raw.startsWith("/") || segments.some((s) => s === ".." || s === ".")) {
    return `playbook must be a relative path inside the synced playbooks (<archive>/<file>), got "${raw}"`;
  }
  if (segments.length < 2) return `playbook names the archive and the file in it (<archive>/<file>, for example web/site.yml), got "${raw}"`;
  return [pathSegment(segments[0]!), ...segments.slice(1)];
}

function jsonObject(value: unknown): JsonObject | string {
  if (value === undefined || value === null || value === "") return {};
  if (typeof value === "object" && !Array.isArray(value)) return value as JsonObject;
  let parsed: unknown;
  try {
    parsed = JSON.parse(String(value));
  } catch (err) {
    return `extra_vars is not valid JSON: ${(err as Error).message}`;
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) return "extra_vars must be a JSON object";
  return parsed as JsonObject;
}

function flag(value: unknown, fallback: boolean): boolean | undefined {
  if (typeof value === "boolean") return value;
  const t = text(value).toLowerCase();
  if (t === "") return fallback;
  if (["true", "yes", "1", "on"].includes(t)) return true;
  if (["false", "no", "0", "off"].includes(t)) return false;
  return undefined;
}

/** A comma separated list, blanks dropped. */
function list(value: unknown): string[] {
  return text(value)
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
