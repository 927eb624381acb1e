import test from "ava";

test("exports - @corral/auth exposes only startAuthService; ./internal only what the gateway needs", async (t) => {
  t.deepEqual(Object.keys(await import("@corral/auth")).sort(), ["startAuthService"]);
  t.deepEqual(Object.keys(await import("@corral/auth/internal")).sort(), ["bindingProblem", "openTokenVerifier", "readOidcSettings", "roleFromToken", "signInDetails", "tenantUidOf", "tokenServerUrl"]);
});
