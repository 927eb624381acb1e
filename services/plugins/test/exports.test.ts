/** The package's public surface is its start function: a new export is a decision, made here on purpose. */
import test from "ava";

test("plugins - the package exports only startPluginsService", async (t) => {
  t.deepEqual(Object.keys(await import("@corral/plugins")).sort(), ["startPluginsService"]);
});
