/** Hardware types and image types (docs/catalog.md, The entities): one shape, one validator. */
import type { MachineType } from "../entities.js";
import {
  checkNameKey,
  child,
  getOwn,
  optionalString,
  parseName,
  parseStringMap,
  requireObject,
  setOwn,
} from "./primitives.js";

/**
 * Validates a hardware type or image type: `name` (NAME rule), optional `description`, and `providermap`,
 * an object of provider name (NAME rule) -> object of string values (`flavor` for hardware, `image` for
 * images). Numbers and booleans among the values become strings; `null`, arrays and objects are refused.
 * @throws BadRequestError naming the offending field.
 */
export function parseMachineType(body: unknown): MachineType {
  const obj = requireObject(body, "");
  const name = parseName(getOwn(obj, "name"), "name");
  const description = optionalString(getOwn(obj, "description"), "description");
  const providermap = parseProviderMap(getOwn(obj, "providermap"), "providermap");
  return { name, ...(description === undefined ? {} : { description }), providermap };
}

function parseProviderMap(value: unknown, path: string): MachineType["providermap"] {
  const out: MachineType["providermap"] = {};
  for (const [provider, settings] of Object.entries(requireObject(value, path))) {
    if (settings === undefined) continue;
    checkNameKey(provider, path);
    setOwn(out, provider, parseStringMap(settings, child(path, provider)));
  }
  return out;
}
