/**
 * What the console shows of each catalog kind: its names, the fields its form edits (by their path in the entity,
 * which is also the path the server's validation errors name) and the one-line summary of its list. What the
 * members mean is in docs/catalog.md.
 */
import type { CatalogEntityByKind, CatalogKind, ClusterTemplate, MachineType, Provider, Service } from "@corral/contracts";

/**
 * How a member is edited: `text` a string (empty: left out); `list` names separated by commas; `json` any JSON
 * (empty: left out); `duration` milliseconds or `30m`, `2h`, `1d`; `choice` one name of `choices`.
 */
export type ValueKind = "text" | "list" | "json" | "duration" | "choice";

/** Where a `choice` or a `list` finds the names it offers: a catalog kind, or the plugin types of a kind. */
export type NameSource = { catalog: CatalogKind } | { plugins: "providertypes" | "automatortypes" };

export interface EntityField {
  path: string;
  label: string;
  kind: ValueKind;
  required?: boolean;
  hint?: string;
  names?: NameSource;
}

export interface KindView<K extends CatalogKind> {
  kind: K;
  plural: string;
  singular: string;
  fields: readonly EntityField[];
  summary(entity: CatalogEntityByKind[K]): string;
}

const name: EntityField = { path: "name", label: "Name", kind: "text", required: true, hint: "Letters, digits, dot, dash, underscore." };
const description: EntityField = { path: "description", label: "Description", kind: "text" };

const joined = (names: readonly string[]) => names.join(", ") || "none";

const machineType = (plural: string, singular: string, key: string): Omit<KindView<"hardwaretypes">, "kind"> => ({
  plural,
  singular,
  fields: [
    name,
    description,
    {
      path: "providermap",
      label: "Provider map (JSON)",
      kind: "json",
      required: true,
      hint: `Provider name -> its settings, e.g. {"aws": {"${key}": "..."}}.`,
    },
  ],
  summary: (t: MachineType) => `providers: ${joined(Object.keys(t.providermap))}`,
});

const dependencyFields = (["install", "runtime"] as const).flatMap((phase) =>
  (["requires", "uses"] as const).map(
    (how): EntityField => ({
      path: `dependencies.${phase}.${how}`,
      label: `${phase === "install" ? "Install" : "Runtime"} ${how}`,
      kind: "list",
      names: { catalog: "services" },
    }),
  ),
);

const serviceSummary = (s: Service) => {
  const { install, runtime, conflicts } = s.dependencies;
  const parts = [
    [...install.requires, ...runtime.requires].length ? `requires ${joined([...new Set([...install.requires, ...runtime.requires])])}` : "",
    [...install.uses, ...runtime.uses].length ? `uses ${joined([...new Set([...install.uses, ...runtime.uses])])}` : "",
    conflicts.length ? `conflicts with ${joined(conflicts)}` : "",
  ];
  return parts.filter(Boolean).join("; ") || "no dependencies";
};

export const kindViews: { [K in CatalogKind]: KindView<K> } = {
  providers: {
    kind: "providers",
    plural: "Providers",
    singular: "provider",
    fields: [
      name,
      description,
      { path: "providertype", label: "Provider type", kind: "choice", required: true, names: { plugins: "providertypes" } },
      { path: "provisioner", label: "Provisioner settings (JSON)", kind: "json", hint: "The provider type's admin fields; empty: {}." },
    ],
    summary: (p: Provider) => `type ${p.providertype}`,
  },
  hardwaretypes: { kind: "hardwaretypes", ...machineType("Hardware types", "hardware type", "flavor") },
  imagetypes: { kind: "imagetypes", ...machineType("Image types", "image type", "image") },
  services: {
    kind: "services",
    plural: "Services",
    singular: "service",
    fields: [
      name,
      description,
      { path: "dependencies.provides", label: "Provides", kind: "list", hint: "Names this service stands for." },
      { path: "dependencies.conflicts", label: "Conflicts with", kind: "list", names: { catalog: "services" } },
      ...dependencyFields,
      {
        path: "provisioner.actions",
        label: "Actions (JSON)",
        kind: "json",
        required: true,
        hint: 'Action name -> {type, fields}, e.g. {"install": {"type": "shell", "fields": {"script": "echo"}}}.',
      },
    ],
    summary: serviceSummary,
  },
  clustertemplates: {
    kind: "clustertemplates",
    plural: "Cluster templates",
    singular: "cluster template",
    fields: [
      name,
      description,
      { path: "compatibility.services", label: "Compatible services", kind: "list", names: { catalog: "services" } },
      { path: "compatibility.hardwaretypes", label: "Compatible hardware types", kind: "list", names: { catalog: "hardwaretypes" } },
      { path: "compatibility.imagetypes", label: "Compatible image types", kind: "list", names: { catalog: "imagetypes" } },
      { path: "defaults.services", label: "Default services", kind: "list", required: true, hint: "Each one compatible." },
      { path: "defaults.provider", label: "Default provider", kind: "choice", required: true, names: { catalog: "providers" } },
      { path: "defaults.hardwaretype", label: "Default hardware type", kind: "choice", names: { catalog: "hardwaretypes" } },
      { path: "defaults.imagetype", label: "Default image type", kind: "choice", names: { catalog: "imagetypes" } },
      { path: "defaults.dnsSuffix", label: "DNS suffix", kind: "text" },
      { path: "defaults.config", label: "Default config (JSON)", kind: "json", required: true },
      {
        path: "constraints",
        label: "Constraints (JSON)",
        kind: "json",
        hint: '{"size": {"min", "max"}, "layout": {"mustcoexist", "cantcoexist"}, "services": {name: {"quantities": {"min", "max"}}}}',
      },
      { path: "administration.leaseduration.initial", label: "Initial lease", kind: "duration", hint: "ms, or 30m, 2h, 1d; 0: unlimited." },
      { path: "administration.leaseduration.max", label: "Longest lease", kind: "duration", hint: "0: no limit." },
      { path: "administration.leaseduration.step", label: "Lease step", kind: "duration", hint: "0: any." },
    ],
    summary: (t: ClusterTemplate) => `services: ${joined(t.defaults.services)}; provider ${t.defaults.provider}`,
  },
};

export const isCatalogKind = (value: string): value is CatalogKind => Object.hasOwn(kindViews, value);

/** The view of `kind`, typed for any kind (pages handle one kind at a time, chosen by the address). */
export const viewOf = (kind: CatalogKind) => kindViews[kind] as unknown as KindView<CatalogKind>;
