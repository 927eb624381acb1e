import test from "ava";

test("validation index - exports exactly the intended API", async (t) => {
  const api = await import("../../src/validation/index.js");
  t.deepEqual(Object.keys(api).sort(), [
    "FieldProblem",
    "NAME_PATTERN",
    "anyCaseValue",
    "bodyOf",
    "bodyValidator",
    "booleanField",
    "describeValue",
    "distinct",
    "dnsSuffixField",
    "integerField",
    "isValidName",
    "jsonCopy",
    "jsonObjectField",
    "mapOf",
    "mergeProviderUpdate",
    "nameField",
    "nameKeyedMap",
    "optionalField",
    "paramsValidator",
    "parseCatalogSnapshot",
    "parseClusterTemplate",
    "parseMachineType",
    "parseName",
    "parseProvider",
    "parseService",
    "primaryForm",
    "queryValidator",
    "requestValidator",
    "resourceNameField",
    "stringValue",
    "textField",
    "withProblem",
  ]);
});
