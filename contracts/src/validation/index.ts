/**
 * Validation of untrusted requests. Requests are declared in the endpoint table with the field schemas of
 * fields.ts and checked by the validators of check.ts (serveEndpoints runs them); catalog entities, whose rules
 * need the tenant's plugin types, are checked into their canonical form by the parse functions here. Every
 * refusal is a `BadRequestError` whose message names the field path and the problem, with `details.field` set to
 * that path.
 */
export { isValidName, parseName, describe as describeValue } from "./primitives.js";
export { mergeProviderUpdate, parseProvider } from "./provider.js";
export type { ProviderValidationContext } from "./provider.js";
export { parseMachineType } from "./machine-type.js";
export { parseService } from "./service.js";
export type { ServiceValidationContext } from "./service.js";
export { checkClusterTemplate, parseClusterTemplate } from "./cluster-template.js";
export { parseCatalogSnapshot } from "./catalog-snapshot.js";
export type { ValidationContext } from "./catalog-snapshot.js";
export { bodyValidator, paramsValidator, queryValidator } from "./check.js";
export type { Validator } from "./check.js";
export { requestValidator } from "./endpoint-request.js";
export {
  NAME_PATTERN,
  anyCaseValue,
  bodyOf,
  booleanField,
  distinct,
  dnsSuffixField,
  integerField,
  jsonCopy,
  jsonObjectField,
  mapOf,
  nameKeyedMap,
  nameField,
  optionalField,
  primaryForm,
  resourceNameField,
  stringValue,
  textField,
} from "./fields.js";
export { FieldProblem, withProblem } from "./problems.js";
