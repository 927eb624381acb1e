import test from "ava";

test("validation index - exports exactly the intended API", async (t) => {
  const api = await import("../../src/validation/index.js");
  t.deepEqual(Object.keys(api).sort(), [
    "isValidName",
    "mergeProviderUpdate",
    "parseCatalogSnapshot",
    "parseClusterTemplate",
    "parseId",
    "parseMachineType",
    "parseName",
    "parseProvider",
    "parseService",
    "parseTenant",
    "parseTenantWrite",
  ]);
});
