/**
 * `corral apply` and `corral export` against a running Corral: the test catalog applied from its folder
 * is created, applied again unchanged; an edited file is an update with its diff; an export (JSON or YAML files)
 * applies back unchanged to its own tenant and creates the same catalog in another.
 */
import anyTest, { type TestFn } from "ava";
import { readFile, readdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { createTenant, exportCatalog, KINDS } from "../../test/helpers/catalog.js";
import { FIXTURES_DIR, rawFixtureCatalog } from "../../test/helpers/fixture-catalog.js";
import { registerFixturePluginTypes } from "../../test/helpers/registry.js";
import { startSystem, type TestSystem } from "../../test/helpers/system.js";
import { bundledCorral, corralEnv, runCorral, scratchDir, shown } from "./helpers/run-corral.js";

const test = anyTest as TestFn<{ sys: TestSystem; scratch: Awaited<ReturnType<typeof scratchDir>> }>;

test.before(async (t) => {
  t.context.sys = await startSystem();
  await registerFixturePluginTypes(t.context.sys.nc);
  t.context.scratch = await scratchDir();
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  await t.context.scratch?.remove();
});

const fixtureCount = () => KINDS.reduce((n, kind) => n + rawFixtureCatalog()[kind].length, 0);

/** `corral` as the admin of `tenant`. */
const asAdmin = (t: { context: { sys: TestSystem; scratch: { profile: string } } }, tenant: string) => async (args: string[]) =>
  runCorral(args, { env: corralEnv(t.context.sys.baseUrl, { user: "admin", tenant }, t.context.scratch.profile), script: await bundledCorral() });

interface Outcome {
  kind: string;
  name: string;
  action: string;
  changes?: Array<{ path: string; before?: unknown; after?: unknown }>;
}
const actions = (outcomes: Outcome[]) => [...new Set(outcomes.map((o) => o.action))];

test("apply - the test catalog folder is created, then unchanged on a second apply; the plugins folder beside it is skipped", async (t) => {
  const { name } = await createTenant(t.context.sys.baseUrl, "cliapply");
  const corral = asAdmin(t, name);

  const first = await corral(["apply", "-f", FIXTURES_DIR]);
  t.is(first.code, 0, shown(first));
  const lines = first.stdout.trim().split("\n");
  t.is(lines.filter((l) => / created$/.test(l)).length, fixtureCount(), shown(first));
  t.true(lines.includes("providers/aws-us-east-1 created"), shown(first));
  t.is(lines.at(-1), `${fixtureCount()} created, 0 updated, 0 unchanged, 0 failed`);
  t.regex(first.stderr, /skipped 6 files naming no catalog kind/);

  const second = await corral(["apply", "-f", FIXTURES_DIR, "-o", "json"]);
  t.is(second.code, 0, shown(second));
  const outcomes = JSON.parse(second.stdout) as Outcome[];
  t.is(outcomes.length, fixtureCount());
  t.deepEqual(actions(outcomes), ["unchanged"], "nothing changes the second time");

  // What the server holds is the test catalog, as an import of it would store it.
  const exported = await exportCatalog(t.context.sys.baseUrl, { user: "admin", tenant: name });
  for (const kind of KINDS) t.is(exported[kind].length, rawFixtureCatalog()[kind].length, kind);
});

test("apply - an edited file is updated with a short diff; --dry-run shows it and writes nothing", async (t) => {
  const { name } = await createTenant(t.context.sys.baseUrl, "clidiff");
  const corral = asAdmin(t, name);
  t.is((await corral(["apply", "-f", FIXTURES_DIR])).code, 0);
  const service = JSON.parse(await readFile(join(FIXTURES_DIR, "services", "postgresql.json"), "utf8"));
  const edited = join(t.context.scratch.dir, "services");
  await import("node:fs/promises").then((fs) => fs.mkdir(edited, { recursive: true }));
  await writeFile(join(edited, "postgresql.json"), JSON.stringify({ ...service, description: "edited by the test" }));

  const dry = await corral(["apply", "-f", join(edited, "postgresql.json"), "--dry-run"]);
  t.is(dry.code, 0, shown(dry));
  t.regex(dry.stdout, /services\/postgresql updated \(dry run\)/);
  const stillStored = await exportCatalog(t.context.sys.baseUrl, { user: "admin", tenant: name });
  t.not(stillStored.services.find((s) => s.name === "postgresql").description, "edited by the test", "a dry run writes nothing");

  const applied = await corral(["apply", "-f", edited]);
  t.is(applied.code, 0, shown(applied));
  t.regex(applied.stdout, /^services\/postgresql updated\n {4}~ description: ".*" -> "edited by the test"\n0 created, 1 updated, 0 unchanged, 0 failed\n$/);
  const again = await corral(["apply", "-f", edited]);
  t.regex(again.stdout, /services\/postgresql unchanged/);
});

for (const as of ["json", "yaml"] as const) {
  test(`export - a folder of ${as} files applies back unchanged, and creates the same catalog in another tenant`, async (t) => {
    const base = t.context.sys.baseUrl;
    const source = await createTenant(base, `cliexp${as}`);
    const target = await createTenant(base, `clitarget${as}`);
    t.is((await asAdmin(t, source.name)(["apply", "-f", FIXTURES_DIR])).code, 0);

    const dir = join(t.context.scratch.dir, `export-${as}`);
    const exported = await asAdmin(t, source.name)(["export", "-d", dir, "--as", as]);
    t.is(exported.code, 0, shown(exported));
    t.is(exported.stdout.trim(), `${fixtureCount()} entities written to ${dir}`);
    t.deepEqual((await readdir(dir)).sort(), [...KINDS].sort());
    const oneFile = await readFile(join(dir, "providers", `aws-us-east-1.${as}`), "utf8");
    t.is((as === "json" ? JSON.parse(oneFile) : parseYaml(oneFile)).name, "aws-us-east-1");

    const back = await asAdmin(t, source.name)(["apply", "-f", dir, "-o", "json"]);
    t.is(back.code, 0, shown(back));
    t.deepEqual(actions(JSON.parse(back.stdout)), ["unchanged"]);

    const elsewhere = await asAdmin(t, target.name)(["apply", "-f", dir, "-o", "json"]);
    t.is(elsewhere.code, 0, shown(elsewhere));
    t.deepEqual(actions(JSON.parse(elsewhere.stdout)), ["created"]);
    t.deepEqual(await exportCatalog(base, target.admin), await exportCatalog(base, source.admin), "the same catalog");
  });
}

test("apply - an entity the server refuses is reported with its message, the others still applied; exit 3", async (t) => {
  const { name } = await createTenant(t.context.sys.baseUrl, "clirefused");
  const file = join(t.context.scratch.dir, "mixed.yaml");
  await writeFile(
    file,
    [
      "hardwaretypes:",
      "  - name: tiny",
      "    providermap: { aws-us-east-1: { flavor: t3.micro } }",
      "clustertemplates:",
      "  - name: broken",
      "    constraints: { size: { min: 3, max: 1 } }",
    ].join("\n"),
  );
  const run = await asAdmin(t, name)(["apply", "-f", file]);
  t.is(run.code, 3, shown(run));
  t.regex(run.stdout, /^hardwaretypes\/tiny created$/m);
  t.regex(run.stdout, /^clustertemplates\/broken failed: 400 compatibility is required$/m, "the server's message");
  t.regex(run.stdout, /1 created, 0 updated, 0 unchanged, 1 failed/);
});
