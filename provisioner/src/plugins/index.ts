import { createChefSoloAutomator } from "./chef-solo.js";
import { createShellAutomator } from "./shell.js";
import { createSimProvider } from "./sim.js";
import type { Plugin } from "./types.js";

/** The plugins a provisioner carries unless told otherwise: provider `sim`, automators `shell` and `chef-solo`. */
export function bundledPlugins(): Plugin[] {
  return [createSimProvider(), createShellAutomator(), createChefSoloAutomator()];
}
