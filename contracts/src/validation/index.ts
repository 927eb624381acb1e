/**
 * Validation of untrusted request bodies into the canonical entities of `entities.ts`.
 * Pure functions, no I/O: each returns a fresh object or throws a `BadRequestError` whose message names the
 * field path and the problem, with `details.field` set to that path.
 */
export {
  isValidName,
  parseId,
  parseName,
  getOwn,
  requireObject,
  optionalObject,
  optionalString,
  optionalName,
  parseNameList,
  optionalNameList,
  parseInteger,
  optionalInteger,
  parseBoolean,
  parseJsonObject,
  describe as describeValue,
} from "./primitives.js";
export { parseTenant, parseTenantWrite } from "./tenant.js";
export type { TenantWrite } from "./tenant.js";
export { mergeProviderUpdate, parseProvider } from "./provider.js";
export type { ProviderValidationContext } from "./provider.js";
export { parseMachineType } from "./machine-type.js";
export { parseService } from "./service.js";
export type { ServiceValidationContext } from "./service.js";
export { parseClusterTemplate } from "./cluster-template.js";
export { parseCatalogSnapshot } from "./catalog-snapshot.js";
export type { ValidationContext } from "./catalog-snapshot.js";
