/** Services (docs/catalog.md, Services and dependencies): dependencies and per-action automator settings. */
import {
  SERVICE_ACTION_NAMES,
  type DependencyOrdering,
  type PluginSpec,
  type Service,
  type ServiceAction,
  type ServiceActionName,
  type ServiceDependencies,
} from "../entities.js";
import {
  child,
  fail,
  failAbout,
  getOwn,
  isAbsent,
  optionalNameList,
  optionalObject,
  optionalString,
  parseName,
  parseStringMap,
  requireNonEmptyString,
  requireObject,
} from "./primitives.js";

/** What service validation needs to know about the tenant's plugins. */
export interface ServiceValidationContext {
  /** The automator plugin specification called `name`, or `undefined` when there is none. */
  automatorType(name: string): PluginSpec | undefined;
}

/**
 * Validates a service: `name` (NAME rule), optional `description`, optional `dependencies` (always returned
 * complete, missing lists empty) and `provisioner.actions`: action name (`install`,
 * `configure`, `initialize`, `start`, `stop`, `remove`) -> `{type, fields}`, where `type` is a known automator
 * type and `fields` satisfy its admin parameters (declared fields only; one `required` set fully present).
 * @throws BadRequestError naming the offending field.
 */
export function parseService(body: unknown, ctx: ServiceValidationContext): Service {
  const obj = requireObject(body, "");
  const name = parseName(getOwn(obj, "name"), "name");
  const description = optionalString(getOwn(obj, "description"), "description");
  const dependencies = parseDependencies(getOwn(obj, "dependencies"), "dependencies");
  const provisioner = requireObject(getOwn(obj, "provisioner"), "provisioner");
  const actions = parseActions(getOwn(provisioner, "actions"), "provisioner.actions", ctx);
  return { name, ...(description === undefined ? {} : { description }), dependencies, provisioner: { actions } };
}

function parseDependencies(value: unknown, path: string): ServiceDependencies {
  const obj = optionalObject(value, path) ?? {};
  return {
    provides: optionalNameList(getOwn(obj, "provides"), child(path, "provides")) ?? [],
    conflicts: optionalNameList(getOwn(obj, "conflicts"), child(path, "conflicts")) ?? [],
    install: parseOrdering(getOwn(obj, "install"), child(path, "install")),
    runtime: parseOrdering(getOwn(obj, "runtime"), child(path, "runtime")),
  };
}

function parseOrdering(value: unknown, path: string): DependencyOrdering {
  const obj = optionalObject(value, path) ?? {};
  return {
    requires: optionalNameList(getOwn(obj, "requires"), child(path, "requires")) ?? [],
    uses: optionalNameList(getOwn(obj, "uses"), child(path, "uses")) ?? [],
  };
}

function isActionName(key: string): key is ServiceActionName {
  return (SERVICE_ACTION_NAMES as readonly string[]).includes(key);
}

/** Checks actions in the order given; returns them in the canonical action order. */
function parseActions(value: unknown, path: string, ctx: ServiceValidationContext): Service["provisioner"]["actions"] {
  const given = new Map<ServiceActionName, ServiceAction>();
  for (const [key, action] of Object.entries(requireObject(value, path))) {
    if (action === undefined) continue;
    if (!isActionName(key)) {
      fail(child(path, key), `is not an allowed action (allowed: ${SERVICE_ACTION_NAMES.join(", ")})`);
    }
    given.set(key, parseAction(action, child(path, key), ctx));
  }
  const out: Service["provisioner"]["actions"] = {};
  for (const name of SERVICE_ACTION_NAMES) {
    const action = given.get(name);
    if (action !== undefined) out[name] = action;
  }
  return out;
}

function parseAction(value: unknown, path: string, ctx: ServiceValidationContext): ServiceAction {
  const obj = requireObject(value, path);
  const type = requireNonEmptyString(getOwn(obj, "type"), child(path, "type"));
  const rawFields = getOwn(obj, "fields");
  const fields = isAbsent(rawFields) ? {} : parseStringMap(rawFields, child(path, "fields"));
  const spec = ctx.automatorType(type);
  if (spec === undefined) failAbout(child(path, "type"), `automator type ${type} is not a known automator plugin type`);
  checkAdminFields(spec, fields, child(path, "fields"));
  return { type, fields };
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
