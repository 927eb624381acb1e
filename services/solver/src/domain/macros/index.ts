/**
 * Macro expander: `%host.service.X%`, `%ip.bind_v4.self%`, `%join(map(host.service.X,'$:2181'),',')%` and the
 * other macros of docs/catalog.md (Macros), expanded in config trees per node. Pure: no I/O.
 */
export { createMacroContext, compileConfig, expandConfig, expandString, validateMacros } from "./expand.js";
export { DEFAULT_IP_TYPE } from "./parser.js";
export type { CompiledConfig, ExpandOptions } from "./expand.js";
export type { MacroContext } from "./context.js";
