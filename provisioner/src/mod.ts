/** @corral/provisioner: the reference provisioner and its plugin interface. Explicit exports only. */
export { startProvisioner, defaultProvisionerId } from "./provisioner.js";
export { runProvisionerProcess } from "./process.js";
export type { ProvisionerProcessOptions } from "./process.js";
export type { ProvisionerOptions, RunningProvisioner } from "./provisioner.js";
export { bundledPlugins } from "./plugins/index.js";
export { createSimProvider, SIM_SPEC, SIM_SECURED_SPEC } from "./plugins/sim.js";
export type { SimProviderOptions } from "./plugins/sim.js";
export { createShellAutomator, SHELL_SPEC } from "./plugins/shell.js";
export type { ShellAutomatorOptions } from "./plugins/shell.js";
export { createChefSoloAutomator, CHEF_SOLO_SPEC } from "./plugins/chef-solo.js";
export type { ChefSoloAutomatorOptions } from "./plugins/chef-solo.js";
export { createAnsibleAutomator, ANSIBLE_SPEC } from "./plugins/ansible/index.js";
export type { AnsibleAutomatorOptions } from "./plugins/ansible/index.js";
export { DOCKER_SPEC } from "./plugins/docker/index.js";
export { HOSTPOOL_SPEC } from "./plugins/hostpool/index.js";
export type { BundledPluginsOptions } from "./plugins/index.js";
export { nodeDir, resourceDir, tenantDir, pathSegment } from "./paths.js";
export type {
  Plugin,
  ProviderPlugin,
  AutomatorPlugin,
  PluginContext,
  PluginOutcome,
  ServiceActionCall,
  ProviderHealth,
  HealthCheckContext,
} from "./plugins/types.js";
