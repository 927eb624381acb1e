/**
 * The command line itself: usage errors (exit 2, nothing sent), the server's error messages (exit 3, the JSON
 * error body with -o json), settings from flags over the environment over the profile file, and `corral login`
 * against the token server of a system with security on (the token stored in the profile is then used).
 */
import anyTest, { type TestFn } from "ava";
import { readFile, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { corralEnv, runCorral, scratchDir, shown } from "./helpers/run-corral.js";

interface Context {
  sys: TestSystem;
  scratch: Awaited<ReturnType<typeof scratchDir>>;
}
const test = anyTest as TestFn<Context>;

test.before(async (t) => {
  t.context.scratch = await scratchDir();
  const realmfile = join(t.context.scratch.dir, "realm.properties");
  await writeFile(realmfile, ["root: rootpw,superadmin", "alice: alicepw"].join("\n"));
  t.context.sys = await startSystem({ security: { config: { "security.authentication.basic.realmfile": realmfile } } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.scratch?.remove();
});

/** A profile file of the test's own. */
const profileIn = (t: { context: Context }, name: string) => join(t.context.scratch.dir, `${name}.json`);

test("usage - an unknown flag, a missing argument, an unknown command or output format exit 2 and say what is wrong", async (t) => {
  const env = { CORRAL_CLI_CONFIG: profileIn(t, "usage"), CORRAL_USER: "alice", CORRAL_TENANT: "superadmin" };
  const cases: Array<[string[], RegExp]> = [
    [["status", "--bogus"], /^corral: Unknown option '--bogus'.*\(corral status -h shows the usage\)$/m],
    [["clusters", "get"], /^corral: clusters get takes 1 argument \(<id>\), got 0/m],
    [["clusters", "frobnicate"], /^corral: clusters frobnicate: name one of these commands:\n {2}corral clusters nodes <cluster-id>/m],
    [["frobnicate"], /^corral: unknown command "frobnicate"; corral help lists the commands$/m],
    [["status", "-o", "xml"], /^corral: -o xml: the output format is one of table, json, yaml$/m],
    [["clusters", "create", "--num-machines", "three"], /^corral: --num-machines three: must be an integer$/m],
    [["clusters", "create"], /^corral: this request needs a body: -f <file>, --data <json> or the fields .*--num-machines/m],
    [["status", "--url", "ftp://x"], /^corral: --url ftp:\/\/x: only http and https are spoken$/m],
  ];
  for (const [args, message] of cases) {
    const run = await runCorral(args, { env });
    t.is(run.code, 2, `${args.join(" ")}: ${shown(run)}`);
    t.regex(run.stderr, message, args.join(" "));
    t.is(run.stdout, "", "nothing on stdout");
  }
  const noTenant = await runCorral(["status"], { env: { CORRAL_CLI_CONFIG: profileIn(t, "usage"), CORRAL_USER: "alice" } });
  t.is(noTenant.code, 2);
  t.regex(noTenant.stderr, /no tenant: give --tenant, set CORRAL_TENANT, or store it with `corral config set --tenant <tenant>`/);
});

test("settings - flags win over the environment, the environment over the profile; config set and use write the profile", async (t) => {
  const profile = profileIn(t, "precedence");
  const show = async (args: string[], env: Record<string, string> = {}) => {
    const run = await runCorral(["config", "show", "-o", "json", ...args], { env: { CORRAL_CLI_CONFIG: profile, ...env } });
    t.is(run.code, 0, shown(run));
    return JSON.parse(run.stdout);
  };
  const set = await runCorral(["config", "set", "--url", "profile-host:1", "--user", "puser", "--tenant", "ptenant"], { env: { CORRAL_CLI_CONFIG: profile } });
  t.is(set.code, 0, shown(set));
  t.is((await stat(profile)).mode & 0o777, 0o600, "the profile file is private");
  t.like(await show([]), { url: "http://profile-host:1/v2", user: "puser", tenant: "ptenant", sources: { url: "profile", user: "profile" } });
  t.like(await show([], { CORRAL_USER: "euser", CORRAL_URL: "https://env-host/v2" }), {
    url: "https://env-host/v2",
    user: "euser",
    tenant: "ptenant",
    sources: { url: "env", user: "env", tenant: "profile" },
  });
  t.like(await show(["--user", "fuser"], { CORRAL_USER: "euser" }), { user: "fuser", sources: { user: "flag" } });

  // A second profile, made current, then named explicitly.
  t.is((await runCorral(["config", "use", "staging"], { env: { CORRAL_CLI_CONFIG: profile } })).code, 0);
  t.is((await runCorral(["config", "set", "--user", "suser"], { env: { CORRAL_CLI_CONFIG: profile } })).code, 0);
  t.like(await show([]), { profile: "staging", user: "suser", url: "http://localhost:55054/v2", sources: { url: "default" } });
  t.like(await show(["--profile", "default"]), { profile: "default", user: "puser" });
  t.like(JSON.parse(await readFile(profile, "utf8")), { current: "staging", profiles: { default: { user: "puser" }, staging: { user: "suser" } } });

  await writeFile(profile, "{ not json");
  const broken = await runCorral(["config", "show"], { env: { CORRAL_CLI_CONFIG: profile } });
  t.is(broken.code, 2);
  t.regex(broken.stderr, /the profile file .* is not JSON/);
});

test("login - a token from the token server is stored in the profile and sent; without it the server's 401 message, exit 3", async (t) => {
  const { sys } = t.context;
  const env = corralEnv(sys.baseUrl, { user: "root", tenant: "superadmin" }, profileIn(t, "login"));

  const refused = await runCorral(["status"], { env });
  t.is(refused.code, 3, shown(refused));
  t.regex(refused.stderr, /^corral: .+ \(HTTP 401 \w+\) \{"auth_uri":\["http:\/\/127\.0\.0\.1:\d+\/token"\]\}$/m);
  const refusedJson = await runCorral(["status", "-o", "json"], { env });
  t.like(JSON.parse(refusedJson.stderr), { status: 401, details: { auth_uri: [sys.tokenUrl] } });

  const wrong = await runCorral(["login", "--password-stdin"], { env, input: "nope\n" });
  t.is(wrong.code, 3, shown(wrong));
  t.regex(wrong.stderr, /HTTP 401/);

  const login = await runCorral(["login", "--password-stdin"], { env, input: "rootpw\n" });
  t.is(login.code, 0, shown(login));
  t.regex(login.stdout, /^logged in as root in tenant superadmin; token stored in profile default/);
  const stored = JSON.parse(await readFile(profileIn(t, "login"), "utf8"));
  t.is(typeof stored.profiles.default.token, "string");
  t.is(stored.profiles.default.tokenUrl, sys.tokenUrl, "found through the gateway's 401");

  const listed = await runCorral(["tenants", "list", "-o", "json"], { env });
  t.is(listed.code, 0, shown(listed));
  t.true((JSON.parse(listed.stdout) as Array<{ name: string }>).some((tenant) => tenant.name === "superadmin"));

  // A 4xx of the API with the token: the server's message on stderr.
  const missing = await runCorral(["tenants", "get", "no-such-tenant"], { env });
  t.is(missing.code, 3, shown(missing));
  t.regex(missing.stderr, /^corral: tenant no-such-tenant not found \(HTTP 404 not_found\)$/m);

  const logout = await runCorral(["logout"], { env });
  t.is(logout.code, 0, shown(logout));
  t.is(JSON.parse(await readFile(profileIn(t, "login"), "utf8")).profiles.default.token, undefined);
  const revoked = await runCorral(["status", "--token", stored.profiles.default.token], { env });
  t.is(revoked.code, 3, "the revoked token is refused");
  t.regex(revoked.stderr, /HTTP 401 invalid_token/);
});
