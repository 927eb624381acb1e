/**
 * The template's size bounds after a grow or a shrink, in the words of the create check
 * (`Size must be at least 3. ...`, docs/catalog.md, Layout).
 */
import type { NormalizedConstraints } from "../constraints.js";
import { nodeCount } from "./cluster-state.js";

/**
 * Why `current` nodes changed by `delta` (positive: added, negative: removed) break `constraints.size`;
 * undefined when the new size is within bounds.
 */
export function sizeProblem(constraints: NormalizedConstraints, templateName: string, current: number, delta: number): string | undefined {
  const size = current + delta;
  if (size >= constraints.sizeMin && size <= constraints.sizeMax) return undefined;
  const bound =
    constraints.sizeMax === Infinity
      ? `at least ${constraints.sizeMin}`
      : `at least ${constraints.sizeMin} but not greater than ${constraints.sizeMax}`;
  const change =
    delta >= 0
      ? `Adding ${nodeCount(delta)} to ${current} makes ${size}`
      : `Removing ${nodeCount(-delta)} from ${current} leaves ${size}`;
  return `Size must be ${bound}. ${change} (template ${templateName}, constraints.size)`;
}

/** The size bounds as `details` give them (no max: null). */
export const sizeDetails = (constraints: NormalizedConstraints): { min: number; max: number | null } => ({
  min: constraints.sizeMin,
  max: constraints.sizeMax === Infinity ? null : constraints.sizeMax,
});
