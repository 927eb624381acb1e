/**
 * Cross-check of the test catalog (`test/fixtures/catalog`) against the original system's catalog, when a copy of
 * it sits beside the repository (`<repo>/../shared/fixtures/coopr-catalog`, as on CI). Without it the test passes
 * and logs why it did nothing: the repository's own tests never need it.
 *
 * Both catalogs go through the same checks: every entity passes the product's validator, every template solves
 * at its minimal size (the layout keeps the template's constraints), plans a create, and its config's macros expand
 * on every node of that layout. Then the reference's use of the catalog model (dependency kinds, constraint kinds,
 * action names, macro kinds, plugin field attributes) must be covered by the test catalog, so the tests keep
 * exercising everything a real catalog uses.
 */
import test, { type ExecutionContext } from "ava";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { CATALOG_KINDS, parseCatalogSnapshot, type CatalogKind, type CatalogSnapshot, type Json, type PluginSpec } from "@corral/contracts";
import { checkLayout, createMacroContext, expandConfig, planAction, solveLayout, validateMacros } from "@corral/solver";
import { FIXTURES_DIR } from "../helpers/fixture-catalog.js";

/** The only place in the repository that names this folder. */
const REFERENCE_DIR = fileURLToPath(new URL("../../../shared/fixtures/coopr-catalog", import.meta.url));

interface RawCatalog {
  entities: Record<CatalogKind, any[]>;
  automators: PluginSpec[];
  providerTypes: PluginSpec[];
}

function readJsonDir(root: string, dir: string): any[] {
  const folder = join(root, dir);
  return readdirSync(folder)
    .filter((f) => f.endsWith(".json"))
    .sort()
    .map((f) => JSON.parse(readFileSync(join(folder, f), "utf8")));
}

function readCatalog(root: string): RawCatalog {
  return {
    entities: Object.fromEntries(CATALOG_KINDS.map((kind) => [kind, readJsonDir(root, kind)])) as Record<CatalogKind, any[]>,
    automators: readJsonDir(root, "plugins/automatortypes"),
    providerTypes: readJsonDir(root, "plugins/providertypes"),
  };
}

/** Validates the catalog against its own plugin specs; throws the validator's 400 on the first bad entity. */
function validate(raw: RawCatalog): CatalogSnapshot {
  const providerTypes = new Set(raw.providerTypes.map((s) => s.name));
  return parseCatalogSnapshot(raw.entities, {
    isProviderType: (name) => providerTypes.has(name),
    automatorType: (name) => raw.automators.find((s) => s.name === name),
  });
}

interface TemplateReport {
  template: string;
  nodes: number;
  layouts: number;
  stages: number;
  tasks: number;
}

/** Solves, checks, plans and expands every template at its minimal size; answers what each gave. */
function solveEveryTemplate(t: ExecutionContext, name: string, catalog: CatalogSnapshot): TemplateReport[] {
  const solverCatalog = { services: catalog.services, hardwareTypes: catalog.hardwaretypes, imageTypes: catalog.imagetypes };
  return catalog.clustertemplates.map((template) => {
    const numMachines = template.constraints?.size?.min ?? 1;
    const solution = solveLayout({
      template,
      provider: { name: template.defaults.provider },
      catalog: solverCatalog,
      numMachines,
      clusterId: "00000001",
      clusterName: "crosscheck",
    });
    const where = `${name} ${template.name} at ${numMachines}`;
    t.is(solution.nodes.length, numMachines, where);
    t.deepEqual(checkLayout(template, solution.nodes), [], `${where}: the layout keeps the constraints`);
    const placed = new Set(solution.nodes.flatMap((n) => n.services));
    t.deepEqual(template.defaults.services.filter((s) => !placed.has(s)), [], `${where}: every default service placed`);

    const plan = planAction({ action: "cluster_create", nodes: solution.nodes, services: catalog.services });
    const tasks = plan.stages.flat();
    t.deepEqual([...new Set(tasks.map((task) => task.nodeId))].sort(), solution.nodes.map((n) => n.id).sort(), `${where}: every node planned`);

    validateMacros(template.defaults.config);
    const context = createMacroContext({
      owner: "someone",
      nodes: solution.nodes.map((n, i) => ({
        ...n,
        properties: { ...n.properties, ipaddresses: { bind_v4: `10.0.0.${i + 1}`, access_v4: `100.64.0.${i + 1}` } },
      })),
    });
    for (const node of solution.nodes) expandConfig(template.defaults.config, context, node.id);

    return { template: template.name, nodes: numMachines, layouts: solution.layout.length, stages: plan.stages.length, tasks: tasks.length };
  });
}

// ---------------------------------------------------------------------------------------------------------------
// What a catalog uses of the model

const MACRO = /%([^%]+)%/g;

/** The kind of one macro's text: `join(map(host.service.x,'$'),',')` -> join, map, host.service. */
function macroKinds(text: string): string[] {
  const kinds: string[] = [];
  let inner = text;
  for (const wrapper of ["join", "map"]) {
    if (inner.startsWith(`${wrapper}(`)) {
      kinds.push(wrapper);
      inner = inner.slice(wrapper.length + 1);
    }
  }
  const name = /^[\w.-]+/.exec(inner)?.[0] ?? "";
  if (/^[\w.-]+\[\d+\]/.test(inner)) kinds.push("[index]");
  if (name === "cluster.owner" || name === "host.self") kinds.push(name);
  else if (/^ip(\.[\w-]+)?\.self$/.test(name)) kinds.push(name === "ip.self" ? "ip.self" : "ip.<type>.self");
  else if (name.startsWith("ip.service.")) kinds.push("ip.service");
  else if (/^ip\.[\w-]+\.service\./.test(name)) kinds.push("ip.<type>.service");
  else kinds.push(name.replace(/^(host\.service|num\.service|instance\.self\.service)\..*$/, "$1"));
  return kinds;
}

function configStrings(value: Json | undefined, out: string[] = []): string[] {
  if (typeof value === "string") out.push(value);
  else if (Array.isArray(value)) for (const v of value) configStrings(v, out);
  else if (value !== null && typeof value === "object") for (const v of Object.values(value)) configStrings(v, out);
  return out;
}

const isNumericString = (v: unknown): boolean => typeof v === "string" && /^[0-9]+$/.test(v);

/** The parts of the catalog model a catalog uses, as written (before canonicalisation), as a sorted list. */
function modelUse(raw: RawCatalog): string[] {
  const used = new Set<string>();
  for (const s of raw.entities.services) {
    const d = s.dependencies ?? {};
    if (d.provides?.length) used.add("service: provides");
    if (d.conflicts?.length) used.add("service: conflicts");
    for (const phase of ["install", "runtime"]) {
      for (const kind of ["requires", "uses"]) if (d[phase]?.[kind]?.length) used.add(`service: ${phase}.${kind}`);
    }
    for (const [action, body] of Object.entries<any>(s.provisioner?.actions ?? {})) {
      used.add(`service: action ${action}`);
      used.add(`service: automator ${body.type}`);
    }
  }
  for (const tpl of raw.entities.clustertemplates) {
    const c = tpl.constraints ?? {};
    if (c.size?.min !== undefined) used.add("template: size.min");
    if (c.size?.max !== undefined) used.add("template: size.max");
    if (isNumericString(c.size?.min) || isNumericString(c.size?.max)) used.add("template: numeric string size");
    if (c.layout?.mustcoexist?.length) used.add("template: mustcoexist");
    if (c.layout?.cantcoexist?.length) used.add("template: cantcoexist");
    for (const sc of Object.values<any>(c.services ?? {})) {
      if (sc.hardwaretypes?.length) used.add("template: service hardwaretypes");
      if (sc.imagetypes?.length) used.add("template: service imagetypes");
      if (sc.quantities?.min !== undefined) used.add("template: quantities.min");
      if (sc.quantities?.max !== undefined) used.add("template: quantities.max");
      for (const v of [sc.quantities?.min, sc.quantities?.max]) {
        if (typeof v === "number") used.add("template: number quantity");
        if (isNumericString(v)) used.add("template: numeric string quantity");
      }
    }
    if (tpl.defaults?.hardwaretype) used.add("template: default hardwaretype");
    if (tpl.defaults?.imagetype) used.add("template: default imagetype");
    if (tpl.administration?.leaseduration) used.add("template: leaseduration");
    for (const text of configStrings(tpl.defaults?.config)) {
      if (text.includes("%%")) used.add("macro: %% escape");
      // `%%` is an escaped percent sign, never a macro delimiter.
      for (const m of text.replaceAll("%%", "").matchAll(MACRO)) {
        for (const kind of macroKinds(m[1] as string)) used.add(`macro: ${kind}`);
      }
    }
  }
  for (const spec of [...raw.automators, ...raw.providerTypes]) {
    const kind = raw.automators.includes(spec) ? "automator" : "provider";
    for (const [format, rt] of Object.entries<any>(spec.resourceTypes ?? {}).map(([, v]) => [v.format, v])) {
      used.add(`${kind} type: resource ${format}`);
      if (rt.permissions) used.add(`${kind} type: resource permissions`);
    }
    for (const set of ["admin", "user"] as const) {
      const params = spec.parameters?.[set];
      if (!params) continue;
      used.add(`${kind} type: ${set} fields`);
      if (params.required.length > 1) used.add(`${kind} type: ${set} alternative required sets`);
      for (const field of Object.values(params.fields)) {
        used.add(`${kind} type: field type ${field.type}`);
        for (const attribute of ["override", "sensitive", "default", "options"] as const) {
          if (field[attribute] !== undefined) used.add(`${kind} type: field ${attribute}`);
        }
      }
    }
  }
  return [...used].sort();
}

// ---------------------------------------------------------------------------------------------------------------

test("the test catalog against the reference catalog beside the repository, when there is one", (t) => {
  if (!existsSync(REFERENCE_DIR)) {
    t.log(`skipped: no reference catalog at ${REFERENCE_DIR}; the tests use the repository's own catalog (${FIXTURES_DIR})`);
    t.pass();
    return;
  }
  const ours = readCatalog(FIXTURES_DIR);
  const reference = readCatalog(REFERENCE_DIR);
  for (const [name, raw] of [["test catalog", ours], ["reference", reference]] as const) {
    const snapshot = validate(raw);
    const counts = CATALOG_KINDS.map((kind) => `${snapshot[kind].length} ${kind}`).join(", ");
    t.log(`${name}: validated ${counts}, ${raw.automators.length} automator and ${raw.providerTypes.length} provider types`);
    for (const r of solveEveryTemplate(t, name, snapshot)) {
      t.log(`  ${r.template}: ${r.nodes} node(s) in ${r.layouts} layout(s), create plan ${r.stages} stages, ${r.tasks} tasks`);
    }
    t.log(`${name}: ${snapshot.clustertemplates.length} templates solved, planned and expanded at their minimal size`);
  }
  const ourUse = modelUse(ours);
  const referenceUse = modelUse(reference);
  t.log(`model use: reference ${referenceUse.length} parts, test catalog ${ourUse.length} parts`);
  t.deepEqual(referenceUse.filter((part) => !ourUse.includes(part)), [], "what the reference uses of the catalog model, the test catalog uses too");
});
