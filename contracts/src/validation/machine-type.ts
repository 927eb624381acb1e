/** Hardware types and image types (docs/catalog.md, The entities): one shape, declared once (entity-schemas.ts). */
import { machineTypeWriteSchema } from "../endpoints/entity-schemas.js";
import type { MachineType } from "../entities.js";
import { bodyValidator } from "./check.js";

const validate = bodyValidator(machineTypeWriteSchema);

/**
 * A hardware type or image type in its canonical form: `name` (NAME rule), optional `description`, and
 * `providermap`, an object of provider name (NAME rule) -> object of string values (`flavor` for hardware, `image`
 * for images). Numbers and booleans among the values become strings; `null`, arrays and objects are refused.
 * @throws BadRequestError naming the offending field.
 */
export function parseMachineType(body: unknown): MachineType {
  return validate(body);
}
