/** The package's public surface is its start function (STYLE.md 6). */
import test from "ava";

test("plugins - the package exports only startPluginsService", async (t) => {
  t.deepEqual(Object.keys(await import("@corral/plugins")).sort(), ["startPluginsService"]);
});
