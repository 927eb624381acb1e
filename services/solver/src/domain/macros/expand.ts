/**
 * Macro evaluation and config-tree expansion (docs/catalog.md, Macros).
 */
import { type Json, BadRequestError, type MacroClusterInput, type MacroNode } from "@corral/contracts";
import { ClusterMacroContext } from "./context.js";
import type { MacroContext } from "./context.js";
import { DEFAULT_IP_TYPE, scanString } from "./parser.js";
import type { MacroExpression, ScannedString } from "./parser.js";

/**
 * Indexes a cluster's nodes for macro expansion (service -> nodes sorted by nodenum). Build it once per cluster
 * version and reuse it for every node; it also caches the values of node-independent macros.
 * @throws BadRequestError when a node id appears twice.
 */
export function createMacroContext(input: MacroClusterInput): MacroContext {
  return new ClusterMacroContext(input);
}

function incomplete(message: string): BadRequestError {
  return new BadRequestError(message, undefined, "macro_incomplete_cluster");
}

function hostnameOf(node: MacroNode): string {
  const hostname = node.properties.hostname;
  if (typeof hostname !== "string") throw incomplete(`node ${node.id} has no hostname for macro expansion.`);
  return hostname;
}

function ipOf(node: MacroNode, ipType: string): string {
  const ip =
    node.properties.ipaddresses?.[ipType] ?? (ipType === DEFAULT_IP_TYPE ? node.properties.ipaddress : undefined);
  if (typeof ip !== "string") throw incomplete(`node ${node.id} has no ip for macro expansion.`);
  return ip;
}

/** The macro's list of values before map/join, or null when it has none (the macro is then left as is). */
function values(expr: MacroExpression, ctx: ClusterMacroContext, node: MacroNode): string[] | null {
  const ref = expr.ref;
  switch (ref.kind) {
    case "cluster.owner":
      return ctx.owner === undefined ? null : [ctx.owner];
    case "host.self": {
      const hostname = node.properties.hostname;
      return typeof hostname === "string" ? [hostname] : null;
    }
    case "ip.self":
      return [ipOf(node, ref.ipType)];
    case "num.service":
      return [String(ctx.nodesWithService(ref.service).length)];
    case "instance.self.service": {
      const rank = ctx.rankOf(ref.service, node.id);
      return rank === undefined ? null : [String(rank)];
    }
    case "host.service":
    case "ip.service": {
      const nodes = ctx.nodesWithService(ref.service);
      const read = ref.kind === "host.service" ? hostnameOf : (n: MacroNode) => ipOf(n, ref.ipType);
      if (ref.index !== undefined) {
        const picked = nodes[ref.index];
        if (!picked) throw incomplete(`There are fewer than ${ref.index + 1} nodes with ${ref.service} on the cluster`);
        return [read(picked)];
      }
      return nodes.length === 0 ? null : nodes.map(read);
    }
  }
}

function applyFormat(format: string, value: string): string {
  if (format.indexOf("$") < 0) return format;
  let out = "";
  for (let i = 0; i < format.length; i++) {
    const c = format[i];
    if (c === "$") {
      if (format[i + 1] === "$") {
        out += "$";
        i++;
      } else {
        out += value;
      }
    } else {
      out += c;
    }
  }
  return out;
}

function evaluate(expr: MacroExpression, ctx: ClusterMacroContext, node: MacroNode): string | null {
  const compute = (): string | null => {
    const list = values(expr, ctx, node);
    if (list === null) return null;
    const format = expr.format;
    return (format === undefined ? list : list.map((v) => applyFormat(format, v))).join(expr.separator);
  };
  return expr.nodeIndependent ? ctx.cached(expr, compute) : compute();
}

/** Expands one scanned string; returns `original` when no macro had a value (docs/catalog.md, Macros). */
function expandScanned(original: string, scanned: ScannedString, ctx: ClusterMacroContext, node: MacroNode): string {
  const results: (string | null)[] = [];
  let any = false;
  for (const expr of scanned.macros) {
    const value = evaluate(expr, ctx, node);
    if (value !== null) any = true;
    results.push(value);
  }
  if (!any) return original;
  let out = scanned.literals[0] ?? "";
  for (let i = 0; i < results.length; i++) out += (results[i] ?? "") + (scanned.literals[i + 1] ?? "");
  return out;
}

// ---- compiled config trees ----

type CompiledNode =
  | { readonly t: "const"; readonly value: Json }
  | { readonly t: "str"; readonly value: string; readonly scanned: ScannedString; readonly path: readonly string[] }
  | { readonly t: "arr"; readonly value: Json[]; readonly items: readonly CompiledNode[] }
  | { readonly t: "obj"; readonly value: { [key: string]: Json }; readonly entries: ReadonlyMap<string, CompiledNode> };

const compiledBrand = Symbol("CompiledConfig");

/** A config tree with every macro parsed once (see `compileConfig`). */
export interface CompiledConfig {
  /** The config it was compiled from (never modified). */
  readonly source: Json;
  /** Number of macros found in it. */
  readonly macroCount: number;
  readonly [compiledBrand]: CompiledNode;
}

function compileNode(value: Json, path: string[], counter: { n: number }): CompiledNode {
  if (typeof value === "string") {
    let scanned: ScannedString | undefined;
    try {
      scanned = scanString(value);
    } catch (err) {
      throw withPath(err, path);
    }
    if (!scanned) return { t: "const", value };
    counter.n += scanned.macros.length;
    return { t: "str", value, scanned, path: [...path] };
  }
  if (Array.isArray(value)) {
    const items = value.map((item, i) => compileNode(item, [...path, String(i)], counter));
    return items.every((c) => c.t === "const") ? { t: "const", value } : { t: "arr", value, items };
  }
  if (value !== null && typeof value === "object") {
    const entries = new Map<string, CompiledNode>();
    let dynamic = false;
    for (const [key, child] of Object.entries(value)) {
      const compiled = compileNode(child, [...path, key], counter);
      if (compiled.t !== "const") dynamic = true;
      entries.set(key, compiled);
    }
    return dynamic ? { t: "obj", value, entries } : { t: "const", value };
  }
  return { t: "const", value };
}

function withPath(err: unknown, path: readonly string[], nodeId?: string): unknown {
  if (!(err instanceof BadRequestError)) return err;
  const details: Record<string, unknown> = { ...err.details, path: path.join(".") };
  if (nodeId !== undefined) details.nodeId = nodeId;
  return new BadRequestError(err.message, details, err.code);
}

/**
 * Parses every macro of a config tree once, so that expanding it for many nodes does no parsing.
 * @throws BadRequestError `macro_syntax` (details: `macro`, `path`) for the first malformed macro.
 */
export function compileConfig(config: Json): CompiledConfig {
  const counter = { n: 0 };
  const root = compileNode(config, [], counter);
  return { source: config, macroCount: counter.n, [compiledBrand]: root };
}

/**
 * Checks the syntax of every macro in a config tree, without a cluster (Coopr's `validate`).
 * @throws BadRequestError `macro_syntax` (details: `macro`, `path`).
 */
export function validateMacros(config: Json): void {
  compileConfig(config);
}

function expandNode(c: CompiledNode, ctx: ClusterMacroContext, node: MacroNode): Json {
  switch (c.t) {
    case "const":
      return c.value;
    case "str":
      try {
        return expandScanned(c.value, c.scanned, ctx, node);
      } catch (err) {
        throw withPath(err, c.path, node.id);
      }
    case "arr": {
      let changed = false;
      const out = c.items.map((item, i) => {
        const v = expandNode(item, ctx, node);
        if (v !== c.value[i]) changed = true;
        return v;
      });
      return changed ? out : c.value;
    }
    case "obj": {
      let changed = false;
      const out: { [key: string]: Json } = {};
      for (const [key, item] of c.entries) {
        const v = expandNode(item, ctx, node);
        if (v !== c.value[key]) changed = true;
        out[key] = v;
      }
      return changed ? out : c.value;
    }
  }
}

function expandAtPath(c: CompiledNode, path: readonly string[], ctx: ClusterMacroContext, node: MacroNode): Json {
  if (path.length === 0) return expandNode(c, ctx, node);
  if (c.t !== "obj") return c.value; // no such subtree, or nothing to expand under it
  const [first, ...rest] = path as [string, ...string[]];
  const child = c.entries.get(first);
  if (!child) return c.value;
  const expanded = expandAtPath(child, rest, ctx, node);
  if (expanded === c.value[first]) return c.value;
  const out: { [key: string]: Json } = {};
  for (const key of Object.keys(c.value)) out[key] = key === first ? expanded : (c.value[key] as Json);
  return out;
}

/** Options of {@link expandConfig}. */
export interface ExpandOptions {
  /** Expand only the subtree under these object keys (the rest is returned untouched). @default [] */
  readonly path?: readonly string[];
}

function toCompiled(config: Json | CompiledConfig): CompiledConfig {
  if (config !== null && typeof config === "object" && compiledBrand in config) return config as CompiledConfig;
  return compileConfig(config as Json);
}

function contextNode(context: MacroContext, nodeId: string): [ClusterMacroContext, MacroNode] {
  if (!(context instanceof ClusterMacroContext)) throw new TypeError("context must come from createMacroContext");
  const node = context.nodeById.get(nodeId);
  if (!node) throw new BadRequestError(`node ${nodeId} is not in the cluster`);
  return [context, node];
}

/**
 * Expands every macro in every string of a config tree (objects and arrays, any depth) for one node. Keys,
 * numbers, booleans and nulls are untouched; the input is never modified, and unchanged subtrees are returned
 * as the same objects. A string whose macros all have no value (e.g. `%host.service.absent%`) is kept as is; if
 * at least one macro in it has a value, the others become empty (docs/catalog.md, Macros).
 * Pass a `compileConfig` result to parse the config once for many nodes.
 * @example
 * const ctx = createMacroContext({ nodes });
 * expandConfig({ zk: "%join(map(host.service.zookeeper-server,'$:2181'),',')%" }, ctx, "node-1")
 * // => { zk: "zk1.local:2181,zk2.local:2181" }
 * @throws BadRequestError `macro_syntax` for malformed macros, `macro_incomplete_cluster` when the cluster lacks
 *   what a macro needs (details: `macro`, `path`, `nodeId`), or when `nodeId` is not in the cluster.
 */
export function expandConfig(
  config: Json | CompiledConfig,
  context: MacroContext,
  nodeId: string,
  options: ExpandOptions = {},
): Json {
  const compiled = toCompiled(config);
  const [ctx, node] = contextNode(context, nodeId);
  return expandAtPath(compiled[compiledBrand], options.path ?? [], ctx, node);
}

/**
 * Expands the macros of one string for one node (same rules as {@link expandConfig}).
 * @example expandString("hdfs://%host.service.hadoop-hdfs-namenode%:8020", ctx, "node-1") // "hdfs://nn.local:8020"
 * @throws BadRequestError as {@link expandConfig}.
 */
export function expandString(text: string, context: MacroContext, nodeId: string): string {
  const [ctx, node] = contextNode(context, nodeId);
  const scanned = scanString(text);
  if (!scanned) return text;
  try {
    return expandScanned(text, scanned, ctx, node);
  } catch (err) {
    throw withPath(err, [], node.id);
  }
}
