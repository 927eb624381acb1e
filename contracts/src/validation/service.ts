/** Services (docs/catalog.md, Services and dependencies): dependencies and per-action automator settings. */
import { serviceWriteSchema } from "../endpoints/entity-schemas.js";
import type { PluginSpec, Service, ServiceAction } from "../entities.js";
import { bodyValidator } from "./check.js";
import { child, fail, failAbout } from "./primitives.js";

/** What service validation needs to know about the tenant's plugins. */
export interface ServiceValidationContext {
  /** The automator plugin specification called `name`, or `undefined` when there is none. */
  automatorType(name: string): PluginSpec | undefined;
}

const validate = bodyValidator(serviceWriteSchema);

/**
 * Validates a service: `name` (NAME rule), optional `description`, optional `dependencies` (always returned
 * complete, missing lists empty) and `provisioner.actions`: action name (`install`,
 * `configure`, `initialize`, `start`, `stop`, `remove`) -> `{type, fields}`, where `type` is a known automator
 * type and `fields` satisfy its admin parameters (declared fields only; one `required` set fully present). The
 * shape is the declaration's (serviceWriteSchema); the automator rules, which need the plugin types, are here.
 * @throws BadRequestError naming the offending field.
 */
export function parseService(body: unknown, ctx: ServiceValidationContext): Service {
  const service = validate(body) as Service;
  for (const [name, action] of Object.entries(service.provisioner.actions)) {
    checkAutomator(action, `provisioner.actions.${name}`, ctx);
  }
  return service;
}

function checkAutomator(action: ServiceAction, path: string, ctx: ServiceValidationContext): void {
  const spec = ctx.automatorType(action.type);
  if (spec === undefined) failAbout(child(path, "type"), `automator type ${action.type} is not a known automator plugin type`);
  checkAdminFields(spec, action.fields, child(path, "fields"));
}

/**
 * Enforces the automator type's admin parameters: every given field must be declared, and when `required`
 * lists alternative sets, at least one set must be fully present with non-empty values.
 */
function checkAdminFields(spec: PluginSpec, fields: Record<string, string>, path: string): void {
  const admin = spec.parameters?.admin;
  if (admin === undefined) return;
  // Specs are announced by provisioners; tolerate one that leaves out `fields` or `required`.
  const declaredFields = admin.fields ?? {};
  const declared = Object.keys(declaredFields);
  for (const key of Object.keys(fields)) {
    if (!Object.hasOwn(declaredFields, key)) {
      fail(
        child(path, key),
        `is not a field of automator type ${spec.name} (declared: ${declared.join(", ") || "none"})`,
      );
    }
  }
  const sets = admin.required ?? [];
  const isPresent = (field: string): boolean => (Object.hasOwn(fields, field) ? fields[field] : "") !== "";
  if (sets.length === 0 || sets.some((set) => set.every(isPresent))) return;
  const missing = (sets[0] ?? []).filter((field) => !isPresent(field));
  const verb = missing.length === 1 ? "is" : "are";
  failAbout(path, `${missing.join(", ")} ${verb} required by automator type ${spec.name}`);
}
