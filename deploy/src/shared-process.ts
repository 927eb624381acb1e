/**
 * The launcher's shared process: several small services in one node process (`launcher.sharedProcess`), which
 * costs one runtime's memory instead of one each. Which services, where their definitions are and what each one's
 * environment adds come from the launcher in {@link SHARED_PROCESS_ENV}; the entry is shared-process-main.ts.
 */
import type { Instance } from "./instances.js";

/** The environment variable that carries the shared process's members (JSON, {@link SharedMember}[]). */
export const SHARED_PROCESS_ENV = "CORRAL_SHARED_PROCESS";

/** The shared process's entry, relative to the repository root (as a service's `src/index.ts`). */
export const SHARED_PROCESS_ENTRY = "deploy/src/shared-process-main.ts";

/** One service the shared process runs. */
export interface SharedMember {
  service: string;
  /** Its definition's source (`services/<name>/src/service-process.ts`), relative to the repository root. */
  definition: string;
  /** What its environment adds to the process's (its own NATS URL, with its own user). */
  env: Record<string, string>;
}

/** What the launcher runs: an instance on its own, or several together in the shared process. */
export type LaunchUnit = { kind: "alone"; instance: Instance } | { kind: "shared"; instances: Instance[] };

/** The `launcher.sharedProcess` setting as service names; a name that is no service is an error that lists them. */
export function parseSharedServices(value: string, known: readonly string[]): string[] {
  const names = value.split(",").map((s) => s.trim()).filter(Boolean);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new Error(`launcher.sharedProcess names ${unknown.join(", ")}, which is no service; services: ${known.join(", ")}`);
  }
  return [...new Set(names)];
}

/**
 * Groups the instances to run: those of the shared services that run one instance and have a definition go into
 * one process (when at least two do); every other instance runs alone. A service with several instances runs them
 * alone, so that one dying leaves the others serving.
 */
export function launchUnits(instances: readonly Instance[], shared: readonly string[]): LaunchUnit[] {
  const count = (name: string) => instances.filter((i) => i.service.name === name).length;
  const joins = (i: Instance) => shared.includes(i.service.name) && count(i.service.name) === 1 && i.service.definition !== undefined;
  const together = instances.filter(joins);
  if (together.length < 2) return instances.map((instance) => ({ kind: "alone", instance }));
  return [...instances.filter((i) => !joins(i)).map((instance): LaunchUnit => ({ kind: "alone", instance })), { kind: "shared", instances: together }];
}

/** The shared process's name in notices: `auth+metrics+plugins+webhooks`. */
export const sharedProcessName = (instances: readonly Instance[]): string => instances.map((i) => i.name).join("+");

/** Reads {@link SHARED_PROCESS_ENV}; anything else than what the launcher writes is an error saying so. */
export function parseSharedMembers(value: string | undefined): SharedMember[] {
  if (!value) throw new Error(`${SHARED_PROCESS_ENV} is not set: the shared process is started by the launcher (npm start)`);
  const parsed: unknown = JSON.parse(value);
  if (!Array.isArray(parsed) || parsed.length === 0 || !parsed.every(isSharedMember)) {
    throw new Error(`${SHARED_PROCESS_ENV} must be a JSON list of {service, definition, env}`);
  }
  return parsed;
}

function isSharedMember(value: unknown): value is SharedMember {
  const m = value as Partial<SharedMember> | null;
  return (
    typeof m?.service === "string" &&
    typeof m.definition === "string" &&
    typeof m.env === "object" &&
    m.env !== null &&
    Object.values(m.env).every((v) => typeof v === "string")
  );
}
