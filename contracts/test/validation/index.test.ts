import test from "ava";

test("validation index - exports exactly the intended API", async (t) => {
  const api = await import("../../src/validation/index.js");
  t.deepEqual(Object.keys(api).sort(), [
    "describeValue",
    "getOwn",
    "isValidName",
    "mergeProviderUpdate",
    "optionalInteger",
    "optionalName",
    "optionalNameList",
    "optionalObject",
    "optionalString",
    "parseBoolean",
    "parseCatalogSnapshot",
    "parseClusterTemplate",
    "parseId",
    "parseInteger",
    "parseJsonObject",
    "parseMachineType",
    "parseName",
    "parseNameList",
    "parseProvider",
    "parseService",
    "parseTenant",
    "parseTenantWrite",
    "requireObject",
  ]);
});
