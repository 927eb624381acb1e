/** Shared helpers for the validation tests: the Coopr fixture catalog and error assertions. */
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ExecutionContext } from "ava";
import type { PluginSpec } from "../../src/entities.js";
import type { CorralError } from "../../src/errors.js";
import type { ValidationContext } from "../../src/validation/index.js";

/** The Coopr default catalog, outside the repository (`/work/shared/fixtures`); `CORRAL_FIXTURES` overrides. */
export const FIXTURES =
  process.env["CORRAL_FIXTURES"] ??
  fileURLToPath(new URL("../../../../shared/fixtures/coopr-catalog", import.meta.url));

/** Reads one fixture file as untrusted JSON. */
export function fixture(relative: string): unknown {
  return JSON.parse(readFileSync(join(FIXTURES, relative), "utf8")) as unknown;
}

/** Reads every fixture of a folder, sorted by file name. */
export function fixtures(folder: string): { file: string; body: unknown }[] {
  return readdirSync(join(FIXTURES, folder))
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((file) => ({ file, body: fixture(join(folder, file)) }));
}

export const CHEF_SOLO = fixture("plugins/automatortypes/chef-solo.json") as PluginSpec;
export const SHELL = fixture("plugins/automatortypes/shell.json") as PluginSpec;

const AUTOMATORS = new Map([
  ["chef-solo", CHEF_SOLO],
  ["shell", SHELL],
]);

/** The provider types of the fixtures and the chef-solo and shell automator specs. */
export const COOPR_CONTEXT: ValidationContext = {
  isProviderType: (name) => ["aws", "google", "joyent", "openstack", "rackspace"].includes(name),
  automatorType: (name) => AUTOMATORS.get(name),
};

/** A deep copy to tweak in one test without touching the shared original. */
export function clone<T>(value: T): T {
  return structuredClone(value);
}

/** Asserts `fn` throws a 400 `BadRequestError` with exactly `message` and `details.field === field`. */
export function throws400(t: ExecutionContext, fn: () => unknown, message: string, field: string): void {
  const err = t.throws<CorralError>(fn);
  t.is(err?.name, "BadRequestError");
  t.is(err?.status, 400);
  t.is(err?.message, message);
  t.deepEqual(err?.details, { field });
}
