import test from "ava";

// The package's public surface: a new export is a decision, made here on purpose.
test("exports - @corral/provisioner exports exactly its API", async (t) => {
  const mod = await import("@corral/provisioner");
  t.deepEqual(Object.keys(mod).sort(), [
    "CHEF_SOLO_SPEC",
    "DOCKER_SPEC",
    "HOSTPOOL_SPEC",
    "SHELL_SPEC",
    "SIM_SECURED_SPEC",
    "SIM_SPEC",
    "bundledPlugins",
    "createChefSoloAutomator",
    "createShellAutomator",
    "createSimProvider",
    "defaultProvisionerId",
    "nodeDir",
    "pathSegment",
    "resourceDir",
    "runProvisionerProcess",
    "startProvisioner",
    "tenantDir",
  ]);
});
