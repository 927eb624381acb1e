import { isAbsolute, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import type { Logger } from "@corral/shared";
import type { PluginFactory, PluginHost } from "./plugin-host.js";
import type { Plugin } from "./plugins/types.js";

/** A plugin module that cannot be used: the provisioner does not start. The message names the module. */
export class PluginModuleError extends Error {
  override readonly name = "PluginModuleError";
  constructor(
    readonly specifier: string,
    problem: string,
    options?: ErrorOptions,
  ) {
    super(`plugin module ${specifier}: ${problem}`, options);
  }
}

/** `provisioner.plugins` as a list: comma separated, blanks dropped (an empty value loads nothing). */
export function parsePluginModules(value: string): string[] {
  return value
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

export interface LoadPluginModulesOptions {
  /** Module specifiers: package names (resolved as an import from the provisioner) or paths. */
  specifiers: readonly string[];
  host: PluginHost;
  /** Plugins the provisioner carries already (bundled): a module's plugin may not take one of their names. */
  carried: readonly Plugin[];
  /** Paths are relative to this directory. */
  cwd: string;
}

/** One module's plugins. */
export interface LoadedPluginModule {
  specifier: string;
  plugins: Plugin[];
}

/**
 * Loads every plugin module and makes its plugins, all or nothing: a module listed twice, or the first module that
 * is missing, throws while loading, exports the wrong shape, has a factory that throws or returns no plugin, or
 * brings a plugin whose name is already carried (bundled, or by an earlier module) ends the load with a
 * `PluginModuleError`, after closing the plugins already made. Nothing is registered by loading; the caller registers the plugins afterwards.
 */
export async function loadPluginModules(options: LoadPluginModulesOptions): Promise<LoadedPluginModule[]> {
  const twice = options.specifiers.find((s, i) => options.specifiers.indexOf(s) !== i);
  if (twice !== undefined) throw new PluginModuleError(twice, "is listed twice");
  const owners = new Map<string, string>();
  for (const plugin of options.carried) owners.set(kindAndName(plugin), "bundled");
  const loaded: LoadedPluginModule[] = [];
  try {
    for (const specifier of options.specifiers) {
      const log = options.host.log.child({ pluginModule: specifier });
      const factories = factoriesOf(specifier, await importModule(specifier, options.cwd));
      const plugins: Plugin[] = [];
      loaded.push({ specifier, plugins });
      for (const [index, factory] of factories.entries()) {
        const plugin = await make(specifier, index, factory, { ...options.host, log });
        plugins.push(plugin);
        const key = kindAndName(plugin);
        const owner = owners.get(key);
        if (owner) {
          const by = owner === "bundled" ? "a bundled plugin" : owner === specifier ? "an earlier factory of this module" : `plugin module ${owner}`;
          throw new PluginModuleError(specifier, `${plugin.kind} ${plugin.spec.name} is already carried by ${by}`);
        }
        owners.set(key, specifier);
      }
      log.info("plugin module loaded", { plugins: plugins.map((p) => `${p.kind}/${p.spec.name}`) });
    }
  } catch (err) {
    await closeAll(loaded.flatMap((m) => m.plugins), options.host.log);
    throw err;
  }
  return loaded;
}

const kindAndName = (plugin: Plugin) => `${plugin.kind}/${plugin.spec.name}`;

/** Paths (`./x.js`, `../x`, `/abs/x.ts`, `file:` URLs) from `cwd`; anything else as a package, from here. */
async function importModule(specifier: string, cwd: string): Promise<Record<string, unknown>> {
  const isPath = specifier.startsWith(".") || isAbsolute(specifier) || specifier.startsWith("file:");
  const target = isPath && !specifier.startsWith("file:") ? pathToFileURL(resolve(cwd, specifier)).href : specifier;
  try {
    return (await import(target)) as Record<string, unknown>;
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    const message = err instanceof Error ? err.message : String(err);
    if ((code === "ERR_MODULE_NOT_FOUND" || code === "ERR_PACKAGE_PATH_NOT_EXPORTED") && mentions(message, specifier, target)) {
      const where = isPath ? `no such file (${resolve(cwd, specifier)})` : "no such package is installed where the provisioner can import it";
      throw new PluginModuleError(specifier, `not found: ${where}: ${message}`, { cause: err });
    }
    throw new PluginModuleError(specifier, `failed while loading: ${message}`, { cause: err });
  }
}

/** Whether a not-found error is about the module itself, not about a missing import inside it. */
function mentions(message: string, specifier: string, target: string): boolean {
  const missing = /Cannot find (?:package|module) '([^']+)'/.exec(message)?.[1];
  if (missing === undefined) return false;
  const path = target.startsWith("file:") ? fileURLToPath(target) : target;
  return missing === specifier || missing === path || missing === target;
}

function factoriesOf(specifier: string, mod: Record<string, unknown>): readonly unknown[] {
  const given = (["default", "plugins"] as const).filter((name) => mod[name] !== undefined);
  if (given.length === 0) {
    throw new PluginModuleError(specifier, "exports no plugin factories: export an array of factories as the default export or as `plugins`");
  }
  if (given.length === 2 && mod["default"] !== mod["plugins"]) {
    throw new PluginModuleError(specifier, "exports both a default export and `plugins`: export the array of factories once");
  }
  const name = given[0]!;
  const factories = mod[name];
  if (!Array.isArray(factories)) {
    throw new PluginModuleError(specifier, `its ${name === "default" ? "default export" : "`plugins` export"} is ${describe(factories)}, not an array of plugin factories`);
  }
  factories.forEach((f, i) => {
    if (typeof f !== "function") throw new PluginModuleError(specifier, `factory ${i} is ${describe(f)}, not a function (host) => plugin`);
  });
  return factories;
}

async function make(specifier: string, index: number, factory: unknown, host: PluginHost): Promise<Plugin> {
  let made: unknown;
  try {
    made = await (factory as PluginFactory)(host);
  } catch (err) {
    throw new PluginModuleError(specifier, `factory ${index} threw: ${err instanceof Error ? err.message : String(err)}`, { cause: err });
  }
  const problem = pluginProblem(made);
  if (problem) {
    // Whatever it started in the background must stop; it is not registered.
    await (made as Partial<Plugin> | undefined)?.close?.().catch(() => undefined);
    throw new PluginModuleError(specifier, `factory ${index} returned ${problem}`);
  }
  return made as Plugin;
}

/** What is wrong with what a factory returned, or undefined for a usable plugin. */
function pluginProblem(value: unknown): string | undefined {
  if (typeof value !== "object" || value === null) return `${describe(value)}, not a plugin object`;
  const p = value as Record<string, unknown>;
  const spec = p["spec"] as { name?: unknown } | undefined;
  if (typeof spec !== "object" || spec === null || typeof spec.name !== "string" || spec.name === "") {
    return "a plugin without spec.name";
  }
  const operations =
    p["kind"] === "providertypes" ? ["create", "confirm", "delete"] : p["kind"] === "automatortypes" ? ["bootstrap", "runAction"] : undefined;
  if (!operations) return `plugin ${spec.name} of kind ${describe(p["kind"])} (providertypes or automatortypes)`;
  const missing = operations.filter((op) => typeof p[op] !== "function");
  if (missing.length) return `${p["kind"]} ${spec.name} without ${missing.join(", ")}`;
  if (p["close"] !== undefined && typeof p["close"] !== "function") return `${p["kind"]} ${spec.name} whose close is not a function`;
  return undefined;
}

function describe(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string") return `the string ${JSON.stringify(value.length > 40 ? value.slice(0, 40) + "..." : value)}`;
  return typeof value === "object" ? "an object" : `${typeof value === "undefined" ? "undefined" : `a ${typeof value}`}`;
}

async function closeAll(plugins: readonly Plugin[], log: Logger): Promise<void> {
  await Promise.all(
    plugins.map((p) => p.close?.().catch((err: unknown) => log.warn("closing a plugin failed", { plugin: p.spec.name, err }))),
  );
}
