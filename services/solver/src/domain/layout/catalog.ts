/**
 * Pre-checks against the catalog (docs/catalog.md, Layout): usable hardware and image types,
 * service compatibility, existence, required dependencies and conflicts. Each failure is a 400 whose
 * `details.constraint` names the check.
 */
import {
  BadRequestError,
  type ClusterTemplate,
  type MachineType,
  type Service,
  type CatalogList,
} from "@corral/contracts";
import { compareStrings } from "./constraints.js";

export function toNameMap<T extends { name: string }>(list: CatalogList<T>): ReadonlyMap<string, T> {
  if (list instanceof Map) return list as ReadonlyMap<string, T>;
  const map = new Map<string, T>();
  for (const entity of list as readonly T[]) map.set(entity.name, entity);
  return map;
}

/** A usable machine type: its name and its provider entry. */
export interface UsableType {
  name: string;
  /** The providermap entry for the cluster's provider. */
  entry: Readonly<Record<string, string>>;
}

/** How each kind of machine type is named in messages, in the providermap, the request and the template. */
const MACHINE_KINDS = {
  hardware: { noun: "hardware type", key: "flavor", field: "hardwaretype", compatibility: "hardwaretypes" },
  image: { noun: "image type", key: "image", field: "imagetype", compatibility: "imagetypes" },
} as const;
export type MachineKind = keyof typeof MACHINE_KINDS;

/**
 * Coopr's getHardwareTypeMap / getImageTypeMap: with a required type only that type, otherwise every type;
 * a type is usable when the template allows it (empty list = any), its providermap has an entry for the
 * provider, and that entry has the key (`flavor` / `image`). Sorted by name.
 */
export function resolveUsableTypes(
  machineKind: MachineKind,
  all: ReadonlyMap<string, MachineType>,
  required: string | undefined,
  template: ClusterTemplate,
  providerName: string,
): UsableType[] {
  const { noun: kind, key, field } = MACHINE_KINDS[machineKind];
  const compatible = template.compatibility[MACHINE_KINDS[machineKind].compatibility];
  const allowed = compatible.length === 0 ? null : new Set(compatible);
  const check = (type: MachineType): string | undefined => {
    if (allowed !== null && !allowed.has(type.name)) {
      return `${kind} ${type.name} is not compatible with template ${template.name}`;
    }
    const entry = Object.hasOwn(type.providermap, providerName) ? type.providermap[providerName] : undefined;
    if (entry === undefined) return `${kind} ${type.name} has no entry for provider ${providerName}`;
    if (typeof entry[key] !== "string") return `${kind} ${type.name} has no ${key} for provider ${providerName}`;
    return undefined;
  };
  if (required !== undefined) {
    const type = all.get(required);
    if (type === undefined) {
      throw new BadRequestError(`${kind} ${required} does not exist`, { constraint: field, [field]: required });
    }
    const problem = check(type);
    if (problem !== undefined) {
      throw new BadRequestError(problem, { constraint: field, [field]: required, provider: providerName });
    }
    return [{ name: type.name, entry: type.providermap[providerName] as Record<string, string> }];
  }
  const usable: UsableType[] = [];
  const rejected: string[] = [];
  for (const type of all.values()) {
    const problem = check(type);
    if (problem === undefined) {
      usable.push({ name: type.name, entry: type.providermap[providerName] as Record<string, string> });
    } else {
      rejected.push(problem);
    }
  }
  if (usable.length === 0) {
    throw new BadRequestError(
      `no ${kind}s are available to use with template ${template.name} and provider ${providerName}`,
      { constraint: field, provider: providerName, rejected: rejected.sort(compareStrings) },
    );
  }
  return usable.sort((a, b) => compareStrings(a.name, b.name));
}

/** Coopr's compatibility check of requested services against `compatibility.services` (empty = any). */
export function checkServiceCompatibility(template: ClusterTemplate, services: readonly string[]): void {
  const compat = template.compatibility.services;
  if (compat.length === 0) return;
  const allowed = new Set(compat);
  const incompatible = services.filter((s) => !allowed.has(s));
  if (incompatible.length > 0) {
    throw new BadRequestError(`${incompatible.join(",")} are incompatible with the cluster (template ${template.name})`, {
      constraint: "compatibility.services",
      services: incompatible,
    });
  }
}

/** Looks every service up; the first unknown name is a 400. */
export function lookupServices(
  catalog: ReadonlyMap<string, Service>,
  names: readonly string[],
): Map<string, Service> {
  const found = new Map<string, Service>();
  for (const name of names) {
    const service = catalog.get(name);
    if (service === undefined) {
      throw new BadRequestError(`service ${name} does not exist`, { constraint: "services", service: name });
    }
    found.set(name, service);
  }
  return found;
}

/**
 * Every install/runtime `requires` must be a service on the cluster or a name one of them `provides`;
 * then no service may list another service on the cluster in `conflicts` (provided names don't count).
 */
export function checkDependencies(services: ReadonlyMap<string, Service>): void {
  const provided = new Set(services.keys());
  for (const service of services.values()) {
    for (const p of service.dependencies?.provides ?? []) provided.add(p);
  }
  const missing: { service: string; requires: string }[] = [];
  for (const service of services.values()) {
    const deps = service.dependencies;
    const required = new Set([...(deps?.install?.requires ?? []), ...(deps?.runtime?.requires ?? [])]);
    for (const dep of required) {
      if (!provided.has(dep)) missing.push({ service: service.name, requires: dep });
    }
  }
  if (missing.length > 0) {
    throw new BadRequestError(
      missing
        .map((m) => `${m.service} requires ${m.requires}, which is not on the cluster or in the list of services to add.`)
        .join("\n"),
      { constraint: "requires", missing },
    );
  }
  const conflicts: { service: string; conflictsWith: string }[] = [];
  for (const service of services.values()) {
    for (const other of new Set(service.dependencies?.conflicts ?? [])) {
      if (services.has(other)) conflicts.push({ service: service.name, conflictsWith: other });
    }
  }
  if (conflicts.length > 0) {
    throw new BadRequestError(conflicts.map((c) => `${c.service} conflicts with ${c.conflictsWith}.`).join("\n"), {
      constraint: "conflicts",
      conflicts,
    });
  }
}
