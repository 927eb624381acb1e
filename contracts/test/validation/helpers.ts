/** Shared helpers for the validation tests: the test catalog and error assertions. */
import type { ExecutionContext } from "ava";
import type { CorralError } from "../../src/errors.js";
import type { ValidationContext } from "../../src/validation/index.js";
import { FIXTURE_PROVIDER_TYPES, fixtureAutomatorSpecs } from "../../../test/helpers/fixture-catalog.js";

/**
 * The test catalog (`test/fixtures/catalog`): `fixture(relative)` reads one file, `fixtures(folder)` every file of
 * a folder sorted by name, as untrusted JSON.
 */
export {
  FIXTURES_DIR as FIXTURES,
  readFixture as fixture,
  readFixtureFiles as fixtures,
} from "../../../test/helpers/fixture-catalog.js";

const AUTOMATORS = new Map(fixtureAutomatorSpecs().map((spec) => [spec.name, spec]));
export const CHEF_SOLO = AUTOMATORS.get("chef-solo")!;
export const SHELL = AUTOMATORS.get("shell")!;

/** The provider types of the test catalog and its chef-solo and shell automator specs. */
export const CATALOG_CONTEXT: ValidationContext = {
  isProviderType: (name) => FIXTURE_PROVIDER_TYPES.includes(name),
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
