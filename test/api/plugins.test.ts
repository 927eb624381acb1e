/**
 * Plugins through the REST API (docs/api.md): plugin specifications as provisioners
 * announce them, per-tenant resources (upload, list, status filter, stage, recall, delete, sync), every row of the
 * resource version table, archive checks, a large streamed upload, the published active set, bootstrap copies.
 */
import { createHash } from "node:crypto";
import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { gzipSync } from "node:zlib";
import { Objm } from "@nats-io/obj";
import { ANSIBLE_SPEC, CHEF_SOLO_SPEC, DOCKER_SPEC, HOSTPOOL_SPEC, SHELL_SPEC, SIM_SPEC, resourceDir } from "@corral/provisioner";
import { openResourceStore, startTenantJanitor } from "@corral/plugins/testing";
import {
  SUPERADMIN_TENANT,
  buckets,
  decode,
  keyToken,
  kvKey,
  objectStores,
} from "@corral/contracts";
import {
  callEndpoint,
  listKeys,
  openBucket,
  silentLogger,
} from "@corral/shared";
import { api, SUPERADMIN, type ApiResponse, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import { createTenant, uniqueName } from "../helpers/catalog.js";
import { waitForAssignment } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { startSystem } from "../helpers/system.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";
import { byteStream, pluginClient } from "../helpers/plugin-rest.js";
import { resourceArchive, tar, tarGz } from "../../services/plugins/test/tar-builder.js";

// One provisioner: it announces the bundled plugin types (sim; shell, chef-solo) and syncs resources.
// A long gateway timeout: the 50 MB upload test forces garbage collections while it runs.
// Clusters and metrics too: a deleted tenant's name is free again once every service that keeps tenant state purged it.
const test = testWithSystem({ provisioners: 1, clusters: 1, metrics: 1, webhooks: 1, requestTimeoutMs: 60_000 });
type T = SystemTest;

const SCRIPTS = "/plugins/automatortypes/shell/scripts";
const ARCHIVES = "/plugins/automatortypes/shell/archives";
const ROLES = "/plugins/automatortypes/chef-solo/roles";

/** A fresh tenant (workers 0 unless told) and its admin's client. */
async function tenantClient(t: T, prefix: string, workers = 0) {
  const tenant = await createTenant(t.context.sys.baseUrl, prefix, { tenant: { workers } });
  return { name: tenant.name, admin: tenant.admin, user: tenant.user, ...pluginClient(t.context.sys.baseUrl, tenant.admin) };
}
type Client = ReturnType<typeof pluginClient>;

function ok(t: T, res: ApiResponse, what: string): ApiResponse {
  assertOk(t, res, what);
  return res;
}

/** Uploads and answers the new version number; fails the test unless 200. */
async function put(t: T, c: Client, path: string, body: string | Uint8Array): Promise<number> {
  const res = await c.upload(path, body);
  if (res.status !== 200) throw new Error(`upload ${path}: ${show(res)}`);
  return (res.body as { version: number }).version;
}

async function statuses(c: Client, path: string): Promise<Record<number, string>> {
  const res = await c.call("GET", path);
  if (res.status !== 200) throw new Error(`GET ${path}: ${show(res)}`);
  return Object.fromEntries((res.body as Array<{ version: number; status: string }>).map((m) => [m.version, m.status]));
}

const post = async (t: T, c: Client, path: string) => ok(t, await c.call("POST", path), `POST ${path}`);

// -------------------------------------------------------------------------------------------------------------
// plugin specifications

const view = (spec: typeof SHELL_SPEC) => ({
  name: spec.name,
  description: spec.description,
  resourcetypes: Object.fromEntries(Object.entries(spec.resourceTypes ?? {}).map(([k, v]) => [k, { filetype: v.format }])),
  parameters: spec.parameters ?? {},
});

test("plugins - automator and provider types are listed as announced, in the API's plugin shape, sorted by name", async (t) => {
  const c = await tenantClient(t, "types");
  const automators = ok(t, await c.call("GET", "/plugins/automatortypes"), "list automator types");
  t.deepEqual(automators.body, [view(ANSIBLE_SPEC), view(CHEF_SOLO_SPEC), view(SHELL_SPEC)]);
  t.deepEqual((automators.body as any[])[2].resourcetypes, { archives: { filetype: "archive" }, scripts: { filetype: "file" } });
  const providers = ok(t, await c.call("GET", "/plugins/providertypes"), "list provider types");
  t.deepEqual(providers.body, [view(DOCKER_SPEC), view(HOSTPOOL_SPEC), view(SIM_SPEC)]);
});

test("plugins - one type by name; an unknown name is 404; a plugin type other than automatortypes/providertypes is 400", async (t) => {
  const c = await tenantClient(t, "type");
  t.deepEqual(ok(t, await c.call("GET", "/plugins/automatortypes/shell"), "get shell").body, view(SHELL_SPEC));
  t.deepEqual(ok(t, await c.call("GET", "/plugins/automatortypes/chef-solo"), "get chef-solo").body, view(CHEF_SOLO_SPEC));
  t.deepEqual(ok(t, await c.call("GET", "/plugins/providertypes/sim"), "get sim").body, view(SIM_SPEC));
  assertError(t, await c.call("GET", "/plugins/automatortypes/nope"), 404, "unknown automator");
  assertError(t, await c.call("GET", "/plugins/providertypes/shell"), 404, "an automator asked as a provider");
  assertError(t, await c.call("GET", "/plugins/foo"), 400, "list of an unknown plugin type");
  assertError(t, await c.call("GET", "/plugins/foo/shell"), 400, "get of an unknown plugin type");
  assertError(t, await c.call("GET", "/plugins/automatortypes/bad%20name"), 400, "a name breaking the NAME rule");
  // Any user of a tenant may read the specifications (the UI needs them to build forms).
  assertOk(t, await api(t.context.sys.baseUrl, "GET", "/plugins/automatortypes/shell", c.user), "ordinary user reads a type");
  assertOk(t, await api(t.context.sys.baseUrl, "GET", "/plugins/providertypes", c.user), "ordinary user lists types");
});

test("plugins - with no provisioner announced, the type lists are empty arrays", async (t) => {
  const bare = await startSystem({ provisioners: 0 });
  try {
    for (const kind of ["automatortypes", "providertypes"]) {
      const res = await api(bare.baseUrl, "GET", `/plugins/${kind}`, SUPERADMIN);
      assertOk(t, res, `list ${kind}`);
      t.deepEqual(res.body, []);
    }
    assertError(t, await api(bare.baseUrl, "GET", "/plugins/automatortypes/shell", SUPERADMIN), 404, "get shell");
  } finally {
    await bare.stop();
  }
});

// -------------------------------------------------------------------------------------------------------------
// access

test("plugins - resource endpoints and sync need the tenant admin (401 for an ordinary user)", async (t) => {
  const c = await tenantClient(t, "access");
  await put(t, c, `${SCRIPTS}/a.sh`, "echo a");
  const asUser = pluginClient(t.context.sys.baseUrl, c.user);
  const calls: Array<[string, string]> = [
    ["GET", SCRIPTS],
    ["GET", `${SCRIPTS}/a.sh`],
    ["DELETE", `${SCRIPTS}/a.sh`],
    ["DELETE", `${SCRIPTS}/a.sh/versions/1`],
    ["POST", `${SCRIPTS}/a.sh/versions/1/stage`],
    ["POST", `${SCRIPTS}/a.sh/versions/1/recall`],
    ["POST", "/plugins/sync"],
  ];
  for (const [method, path] of calls) assertError(t, await asUser.call(method, path), 401, `${method} ${path} as a user`);
  assertError(t, await asUser.upload(`${SCRIPTS}/b.sh`, "echo b"), 401, "upload as a user");
  assertError(t, await api(t.context.sys.baseUrl, "GET", SCRIPTS, {}), 401, "no identity");
  t.deepEqual(await statuses(c, `${SCRIPTS}/a.sh`), { 1: "inactive" }, "nothing changed");
});

// -------------------------------------------------------------------------------------------------------------
// upload and versions

test("plugins - an upload answers {name, version, status: inactive}; every upload is a new version, never reused", async (t) => {
  const c = await tenantClient(t, "versions");
  const first = await c.upload(`${SCRIPTS}/deploy.sh`, "#!/bin/sh\necho 1\n");
  assertOk(t, first, "first upload");
  t.deepEqual(first.body, { name: "deploy.sh", version: 1, status: "inactive" });
  t.is(await put(t, c, `${SCRIPTS}/deploy.sh`, "echo 2"), 2);
  t.is(await put(t, c, `${SCRIPTS}/deploy.sh`, "echo 3"), 3);
  t.is(await put(t, c, `${SCRIPTS}/other.sh`, "echo other"), 1, "numbers are per resource name");
  ok(t, await c.call("DELETE", `${SCRIPTS}/deploy.sh/versions/3`), "delete the newest version");
  t.is(await put(t, c, `${SCRIPTS}/deploy.sh`, "echo 4"), 4, "the deleted number is not handed out again");
  ok(t, await c.call("DELETE", `${SCRIPTS}/deploy.sh`), "delete every version");
  assertError(t, await c.call("GET", `${SCRIPTS}/deploy.sh`), 404, "no versions left");
  t.is(await put(t, c, `${SCRIPTS}/deploy.sh`, "echo 5"), 5, "not even after deleting them all");
  t.deepEqual(await statuses(c, `${SCRIPTS}/deploy.sh`), { 5: "inactive" });
});

test("plugins - uploads for an unknown plugin, a resource type the plugin does not define, or a bad name are 400", async (t) => {
  const c = await tenantClient(t, "badupload");
  const cases: Array<[string, string]> = [
    ["/plugins/automatortypes/nope/scripts/a.sh", "unknown plugin"],
    ["/plugins/automatortypes/shell/cookbooks/a", "a chef-solo resource type on shell"],
    ["/plugins/automatortypes/shell/nope/a", "undefined resource type"],
    ["/plugins/providertypes/shell/scripts/a.sh", "an automator as a provider"],
    ["/plugins/providertypes/sim/scripts/a.sh", "sim defines no resource types"],
    ["/plugins/foo/shell/scripts/a.sh", "unknown plugin type"],
    [`${SCRIPTS}/bad%20name`, "resource name with a space"],
    [`${SCRIPTS}/a%2Fb`, "resource name with a slash"],
    [`${SCRIPTS}/..`, "resource name .."],
    [`${SCRIPTS}/%2E`, "resource name ."],
  ];
  for (const [path, what] of cases) assertError(t, await c.upload(path, "echo hi"), 400, what);
  t.deepEqual(ok(t, await c.call("GET", SCRIPTS), "list").body, {}, "nothing was stored");
});

test.serial("plugins - the gateway's upload objects are removed whether the upload is accepted or refused", async (t) => {
  const c = await tenantClient(t, "uploads");
  await put(t, c, `${SCRIPTS}/kept.sh`, "echo kept");
  assertError(t, await c.upload(`${SCRIPTS}/bad%20name`, "echo no"), 400, "refused name");
  assertError(t, await c.upload(`${ARCHIVES}/broken`, "not an archive"), 400, "refused archive");
  const uploads = await new Objm(t.context.sys.nc).open(objectStores.uploads);
  const left = (await uploads.list()).filter((o) => !o.deleted);
  t.deepEqual(left.map((o) => o.name), [], "no upload object left behind");
});

// -------------------------------------------------------------------------------------------------------------
// listing

test("plugins - listing by resource type and by name, with the status filter", async (t) => {
  const c = await tenantClient(t, "listing");
  await put(t, c, `${SCRIPTS}/b.sh`, "b1");
  await put(t, c, `${SCRIPTS}/a.sh`, "a1");
  await put(t, c, `${SCRIPTS}/a.sh`, "a2");
  await post(t, c, `${SCRIPTS}/a.sh/versions/2/stage`);
  const meta = (name: string, version: number, status: string) => ({ name, version, status });

  const all = ok(t, await c.call("GET", SCRIPTS), "list by type");
  t.deepEqual(all.body, { "a.sh": [meta("a.sh", 1, "inactive"), meta("a.sh", 2, "staged")], "b.sh": [meta("b.sh", 1, "inactive")] });
  t.deepEqual(Object.keys(all.body as object), ["a.sh", "b.sh"], "names in order");
  t.deepEqual(ok(t, await c.call("GET", `${SCRIPTS}?status=staged`), "staged").body, { "a.sh": [meta("a.sh", 2, "staged")] });
  t.deepEqual(ok(t, await c.call("GET", `${SCRIPTS}?status=STAGED`), "any case").body, { "a.sh": [meta("a.sh", 2, "staged")] });
  t.deepEqual(ok(t, await c.call("GET", `${SCRIPTS}?status=active`), "none active").body, {});
  t.deepEqual(ok(t, await c.call("GET", ARCHIVES), "another resource type").body, {});

  t.deepEqual(ok(t, await c.call("GET", `${SCRIPTS}/a.sh`), "by name").body, [meta("a.sh", 1, "inactive"), meta("a.sh", 2, "staged")]);
  t.deepEqual(ok(t, await c.call("GET", `${SCRIPTS}/a.sh?status=inactive`), "by name, inactive").body, [meta("a.sh", 1, "inactive")]);
  t.deepEqual(ok(t, await c.call("GET", `${SCRIPTS}/a.sh?status=recalled`), "by name, none match").body, []);

  assertError(t, await c.call("GET", `${SCRIPTS}?status=bogus`), 400, "bad status filter (type)");
  assertError(t, await c.call("GET", `${SCRIPTS}/a.sh?status=live`), 400, "bad status filter (name)");
  assertError(t, await c.call("GET", `${SCRIPTS}/nope.sh`), 404, "unknown resource name");
  assertError(t, await c.call("GET", "/plugins/automatortypes/nope/scripts"), 400, "unknown plugin");
  assertError(t, await c.call("GET", "/plugins/automatortypes/shell/nope"), 400, "undefined resource type");
  assertError(t, await c.call("GET", "/plugins/automatortypes/nope/scripts/a.sh"), 400, "unknown plugin (by name)");

  const other = await tenantClient(t, "listing-other");
  t.deepEqual(ok(t, await other.call("GET", SCRIPTS), "another tenant").body, {}, "tenants are isolated");
  assertError(t, await other.call("GET", `${SCRIPTS}/a.sh`), 404, "another tenant's resource");
});

// -------------------------------------------------------------------------------------------------------------
// the resource version table: from, trigger, to

type Status = "inactive" | "staged" | "active" | "recalled";

/** Brings version 1 of a fresh resource to `status` through the API only. */
async function reach(t: T, c: Client, path: string, status: Status): Promise<void> {
  await put(t, c, path, `echo ${status}`);
  if (status === "inactive") return;
  await post(t, c, `${path}/versions/1/stage`);
  if (status === "staged") return;
  await post(t, c, "/plugins/sync");
  if (status === "active") return;
  await post(t, c, `${path}/versions/1/recall`);
}

const TABLE: Array<[Status, "stage" | "recall" | "sync", Status]> = [
  ["inactive", "stage", "staged"],
  ["staged", "stage", "staged"],
  ["active", "stage", "active"],
  ["recalled", "stage", "active"],
  ["active", "recall", "recalled"],
  ["staged", "recall", "inactive"],
  ["inactive", "recall", "inactive"],
  ["recalled", "recall", "recalled"],
  ["staged", "sync", "active"],
  ["recalled", "sync", "inactive"],
];

test("plugins - resource versions go through every row of the version table (stage and recall never 409)", async (t) => {
  await Promise.all(
    TABLE.map(async ([from, trigger, to]) => {
      const c = await tenantClient(t, `row-${from}-${trigger}`);
      const path = `${SCRIPTS}/r.sh`;
      await reach(t, c, path, from);
      t.deepEqual(await statuses(c, path), { 1: from }, `reached ${from}`);
      const res = await c.call("POST", trigger === "sync" ? "/plugins/sync" : `${path}/versions/1/${trigger}`);
      assertOk(t, res, `${from} --${trigger}-->`);
      t.is(res.text, "", `${trigger} answers an empty body`);
      t.deepEqual(await statuses(c, path), { 1: to }, `${from} --${trigger}--> ${to}`);
    }),
  );
});

test("plugins - staging a version un-stages the others, so one version is active after a sync (Coopr's rule)", async (t) => {
  const c = await tenantClient(t, "unstage");
  const path = `${SCRIPTS}/s.sh`;
  for (let i = 1; i <= 3; i++) await put(t, c, path, `echo ${i}`);
  await post(t, c, `${path}/versions/1/stage`);
  await post(t, c, "/plugins/sync");
  t.deepEqual(await statuses(c, path), { 1: "active", 2: "inactive", 3: "inactive" });
  await post(t, c, `${path}/versions/2/stage`);
  t.deepEqual(await statuses(c, path), { 1: "recalled", 2: "staged", 3: "inactive" }, "the active one is recalled");
  await post(t, c, `${path}/versions/3/stage`);
  t.deepEqual(await statuses(c, path), { 1: "recalled", 2: "inactive", 3: "staged" }, "the staged one is un-staged");
  await post(t, c, "/plugins/sync");
  t.deepEqual(await statuses(c, path), { 1: "inactive", 2: "inactive", 3: "active" }, "one active after sync");
  await post(t, c, `${path}/versions/1/stage`);
  await post(t, c, `${path}/versions/3/stage`);
  t.deepEqual(await statuses(c, path), { 1: "inactive", 2: "inactive", 3: "active" }, "re-staging the active one un-stages the other");
});

test("plugins - stage and recall: 404 for an unknown version or resource, 400 for a malformed version or path", async (t) => {
  const c = await tenantClient(t, "stage-errors");
  await put(t, c, `${SCRIPTS}/x.sh`, "echo x");
  for (const op of ["stage", "recall"]) {
    assertError(t, await c.call("POST", `${SCRIPTS}/x.sh/versions/9/${op}`), 404, `${op} of an unknown version`);
    assertError(t, await c.call("POST", `${SCRIPTS}/nope.sh/versions/1/${op}`), 404, `${op} of an unknown resource`);
    for (const v of ["abc", "0", "-1", "1.5", "1e3"]) {
      assertError(t, await c.call("POST", `${SCRIPTS}/x.sh/versions/${v}/${op}`), 400, `${op} of version ${v}`);
    }
    assertError(t, await c.call("POST", `/plugins/automatortypes/nope/scripts/x.sh/versions/1/${op}`), 400, `${op}, unknown plugin`);
    assertError(t, await c.call("POST", `/plugins/automatortypes/shell/nope/x.sh/versions/1/${op}`), 400, `${op}, undefined type`);
  }
  t.deepEqual(await statuses(c, `${SCRIPTS}/x.sh`), { 1: "inactive" });
});

// -------------------------------------------------------------------------------------------------------------
// delete

test("plugins - delete needs every targeted version inactive (409), unknown is 404", async (t) => {
  const c = await tenantClient(t, "delete");
  const path = `${SCRIPTS}/d.sh`;
  await put(t, c, path, "echo 1");
  await put(t, c, path, "echo 2");
  await post(t, c, `${path}/versions/1/stage`);
  const conflict = await c.call("DELETE", path);
  assertError(t, conflict, 409, "delete all with a staged version");
  t.deepEqual((conflict.body as any).details, { versions: [{ version: 1, status: "staged" }] }, "names the blocking version");
  assertError(t, await c.call("DELETE", `${path}/versions/1`), 409, "delete the staged version");
  t.deepEqual(await statuses(c, path), { 1: "staged", 2: "inactive" }, "nothing deleted");
  ok(t, await c.call("DELETE", `${path}/versions/2`), "delete an inactive version");
  assertError(t, await c.call("DELETE", `${path}/versions/2`), 404, "delete it again");
  assertError(t, await c.call("DELETE", `${path}/versions/7`), 404, "unknown version");
  assertError(t, await c.call("DELETE", `${path}/versions/x`), 400, "malformed version");
  await post(t, c, "/plugins/sync");
  assertError(t, await c.call("DELETE", path), 409, "delete all with an active version");
  await post(t, c, `${path}/versions/1/recall`);
  assertError(t, await c.call("DELETE", path), 409, "delete all with a recalled version");
  await post(t, c, "/plugins/sync");
  const gone = await c.call("DELETE", path);
  assertOk(t, gone, "delete all once inactive");
  t.is(gone.text, "");
  assertError(t, await c.call("DELETE", path), 404, "delete all again");
  assertError(t, await c.call("DELETE", `${SCRIPTS}/never.sh`), 404, "unknown resource");
  assertError(t, await c.call("DELETE", `/plugins/automatortypes/nope/scripts/d.sh`), 400, "unknown plugin");
});

// -------------------------------------------------------------------------------------------------------------
// archives

const execFileP = promisify(execFile);

test("plugins - archives: one top-level directory named as the resource is accepted (tar.gz or tar), anything else 400", async (t) => {
  const c = await tenantClient(t, "archives");
  // Made by GNU tar from a real directory, the way an admin would.
  const dir = await mkdtemp(join(tmpdir(), "corral-archive-"));
  try {
    await mkdir(join(dir, "nginx", "recipes"), { recursive: true });
    await writeFile(join(dir, "nginx", "recipes", "default.rb"), "package 'nginx'\n");
    await execFileP("tar", ["-czf", join(dir, "nginx.tar.gz"), "-C", dir, "nginx"]);
    await execFileP("tar", ["-czf", join(dir, "dot.tar.gz"), "-C", join(dir, "nginx"), "."]);
    t.is(await put(t, c, `${ARCHIVES}/nginx`, await readFile(join(dir, "nginx.tar.gz"))), 1, "GNU tar archive");
    // `tar -C nginx .` stores ./recipes/...: its one top-level directory is recipes, not nginx.
    assertError(t, await c.upload(`${ARCHIVES}/nginx`, await readFile(join(dir, "dot.tar.gz"))), 400, "tar -C dir . (no nginx directory)");
    t.is(await put(t, c, `${ARCHIVES}/recipes`, await readFile(join(dir, "dot.tar.gz"))), 1, "the same archive as resource recipes");
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  t.is(await put(t, c, `${ARCHIVES}/example`, resourceArchive("example")), 1, "gzip-compressed");
  t.is(await put(t, c, `${ARCHIVES}/example`, tar([{ name: "example/a.txt", content: "a" }])), 2, "plain tar");
  t.is(await put(t, c, `${ARCHIVES}/dotted`, tarGz([{ name: "./dotted/", type: "dir" }, { name: "./dotted/a" }])), 1, "./ prefixes");
  t.is(await put(t, c, "/plugins/automatortypes/chef-solo/cookbooks/postgresql", resourceArchive("postgresql")), 1, "chef-solo cookbooks");

  const refused: Array<[string, Uint8Array | string, RegExp]> = [
    ["wrong top-level name", resourceArchive("other"), /single top-level directory named example.*"other"/],
    ["two top-level entries", tarGz([{ name: "example/a" }, { name: "extra/b" }]), /"extra"/],
    ["a file next to the directory", tarGz([{ name: "example/a" }, { name: "README" }]), /"README"/],
    ["not a tar.gz", "just text, not an archive", /not a tar archive/],
    ["gzip of something that is not a tar", gzipSync(Buffer.from("hello ".repeat(1000))), /not a tar archive/],
    ["truncated gzip", resourceArchive("example").subarray(0, 20), /gzip|truncated/],
    ["absolute path", tarGz([{ name: "/example/a" }]), /absolute/],
    ["..", tarGz([{ name: "example/../../etc/x" }]), /\.\./],
    ["symlink out", tarGz([{ name: "example/l", type: "symlink", linkname: "/etc/passwd" }]), /absolute/],
    ["empty body", "", /not a tar archive/],
  ];
  for (const [what, body, message] of refused) {
    const res = await c.upload(`${ARCHIVES}/example`, body);
    if (assertError(t, res, 400, what)) t.regex((res.body as { message: string }).message, message, what);
  }
  t.deepEqual(await statuses(c, `${ARCHIVES}/example`), { 1: "inactive", 2: "inactive" }, "refused archives are not versions");
  t.is(await put(t, c, `${ARCHIVES}/example`, resourceArchive("example")), 3, "and take no version number");
  t.is(await put(t, c, `${ROLES}/any.json`, "not an archive, and a file type"), 1, "file resource types take any bytes");
});

// -------------------------------------------------------------------------------------------------------------
// a large upload

const MB = 1024 * 1024;

// Serial (ava runs serial tests before the others): every service of the test system shares this process's event
// loop, so 100 MB streaming through gateway, plugins service and provisioner starved the other tests' requests
// past JetStream's 5 s answer time on a loaded machine. Production runs each service in its own process.
test.serial("plugins - a 100 MB upload streams through gateway and service without holding it, and reaches the provisioner intact", async (t) => {
  t.timeout(120_000);
  const { sys } = t.context;
  const c = await tenantClient(t, "large", 1);
  await waitForAssignment(sys.nc, c.name);
  const size = 100 * MB;
  const expected = createHash("sha256");
  for await (const chunk of byteStream(size, 7)) expected.update(chunk as Buffer);
  const digest = expected.digest("hex");

  // What is alive, not what awaits collection: sample after a forced full GC (each 64 KiB chunk is garbage soon,
  // but a lazy GC lets tens of MB of it pile up). Holding the body anywhere would keep 100 MB alive; streaming
  // keeps the peak flat whatever the size (measured: the same ~15-30 MB for 50 and 200 MB).
  setFlagsFromString("--expose_gc");
  const gc = runInNewContext("gc") as () => void;
  gc();
  const before = process.memoryUsage();
  let peakRss = before.rss;
  let peakBuffers = before.arrayBuffers;
  const sampler = setInterval(() => {
    gc();
    const m = process.memoryUsage();
    peakRss = Math.max(peakRss, m.rss);
    peakBuffers = Math.max(peakBuffers, m.arrayBuffers);
  }, 250);
  const started = Date.now();
  const res = await c.upload(`${ROLES}/big.json`, byteStream(size, 7), { contentLength: size });
  const elapsedMs = Date.now() - started;
  clearInterval(sampler);
  assertOk(t, res, "upload 100 MB");
  t.deepEqual(res.body, { name: "big.json", version: 1, status: "inactive" });
  const rssGrowthMb = (peakRss - before.rss) / MB;
  const buffersGrowthMb = (peakBuffers - before.arrayBuffers) / MB;
  t.log(
    `100 MB upload in ${elapsedMs} ms (GC forced every 250 ms); live Buffer memory peak +${buffersGrowthMb.toFixed(1)} MB, ` +
      `rss peak +${rssGrowthMb.toFixed(1)} MB (test client, gateway, plugins service and provisioner share this process)`,
  );
  t.true(buffersGrowthMb < 50, `live Buffer memory grew by ${buffersGrowthMb.toFixed(1)} MB`);
  t.true(rssGrowthMb < 80, `rss grew by ${rssGrowthMb.toFixed(1)} MB`);

  await post(t, c, `${ROLES}/big.json/versions/1/stage`);
  await post(t, c, "/plugins/sync");
  const file = join(resourceDir(sys.workDir, c.name, "automatortypes", "chef-solo", "roles"), "big.json");
  await eventually(async () => (await stat(file)).size === size, { what: "the provisioner has big.json", timeoutMs: 60_000, intervalMs: 200 });
  const onDisk = createHash("sha256").update(await readFile(file)).digest("hex");
  t.is(onDisk, digest, "the provisioner's copy has the uploaded bytes");
  t.is((await stat(file)).mode & 0o777, 0o644, "a file type without permissions is 0644");
});

// -------------------------------------------------------------------------------------------------------------
// sync and the published active set

interface PublishedSet {
  tenant: string;
  generation: number;
  automatortypes: Record<string, Record<string, { format: string; permissions?: string; active: Array<{ name: string; version: number }> }>>;
  providertypes: Record<string, unknown>;
}

async function publishedSet(t: T, tenant: string): Promise<PublishedSet | undefined> {
  const kv = await openBucket(t.context.sys.nc, buckets.pluginActive);
  const entry = await kv.get(kvKey(tenant));
  return entry?.operation === "PUT" ? decode<PublishedSet>(entry.value) : undefined;
}

test("plugins - sync publishes the tenant's live set for provisioners, and syncs only the caller's tenant", async (t) => {
  const c = await tenantClient(t, "publish");
  const other = await tenantClient(t, "publish-other");
  await put(t, other, `${SCRIPTS}/o.sh`, "echo o");
  await post(t, other, `${SCRIPTS}/o.sh/versions/1/stage`);

  ok(t, await c.call("POST", "/plugins/sync"), "sync with no resources");
  t.like(await publishedSet(t, c.name), { tenant: c.name, generation: 1, automatortypes: {}, providertypes: {} });

  await put(t, c, `${SCRIPTS}/run.sh`, "echo 1");
  await put(t, c, `${SCRIPTS}/run.sh`, "echo 2");
  await put(t, c, `${ARCHIVES}/kit`, resourceArchive("kit"));
  await post(t, c, `${SCRIPTS}/run.sh/versions/2/stage`);
  await post(t, c, `${ARCHIVES}/kit/versions/1/stage`);
  t.is((await publishedSet(t, c.name))?.generation, 1, "staging publishes nothing");
  await post(t, c, "/plugins/sync");
  const set = await publishedSet(t, c.name);
  t.is(set?.generation, 2);
  t.like(set?.automatortypes["shell"]?.["scripts"], { format: "file", permissions: "0755", active: [{ name: "run.sh", version: 2 }] });
  t.like(set?.automatortypes["shell"]?.["archives"], { format: "archive", active: [{ name: "kit", version: 1 }] });
  t.is(set?.automatortypes["shell"]?.["archives"]?.permissions, undefined, "permissions are for files only");

  t.deepEqual(await statuses(other, `${SCRIPTS}/o.sh`), { 1: "staged" }, "another tenant's staged version is untouched");
  t.is(await publishedSet(t, other.name), undefined, "and nothing is published for it");

  await post(t, c, `${SCRIPTS}/run.sh/versions/2/recall`);
  t.like((await publishedSet(t, c.name))?.automatortypes["shell"]?.["scripts"], { active: [{ name: "run.sh", version: 2 }] }, "recalled stays live until sync");
  await post(t, c, "/plugins/sync");
  const after = await publishedSet(t, c.name);
  t.is(after?.automatortypes["shell"]?.["scripts"], undefined, "removed from use at sync");
  t.deepEqual(await statuses(c, `${SCRIPTS}/run.sh`), { 1: "inactive", 2: "inactive" });
});

// -------------------------------------------------------------------------------------------------------------
// bootstrap

test("plugins - bootstrap copies the superadmin's plugin resources with their versions and statuses", async (t) => {
  const { sys } = t.context;
  // The only test of this file that writes superadmin resources: bootstrap copies all of them.
  const su = pluginClient(sys.baseUrl, SUPERADMIN);
  const tool = `${SCRIPTS}/tool.sh`;
  await put(t, su, tool, "echo v1");
  await put(t, su, tool, "echo v2");
  await put(t, su, tool, "echo v3");
  await post(t, su, `${tool}/versions/2/stage`);
  await post(t, su, "/plugins/sync");
  await post(t, su, `${tool}/versions/3/stage`); // 2 recalled, 3 staged
  await put(t, su, `${ARCHIVES}/kit`, resourceArchive("kit"));
  const expected = {
    scripts: ok(t, await su.call("GET", SCRIPTS), "superadmin scripts").body,
    archives: ok(t, await su.call("GET", ARCHIVES), "superadmin archives").body,
  };
  t.deepEqual(await statuses(su, tool), { 1: "inactive", 2: "recalled", 3: "staged" });

  const name = uniqueName("boot");
  const created = await api(sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name, workers: 0 }, bootstrap: true } });
  assertOk(t, created, "create with bootstrap");
  const copy = pluginClient(sys.baseUrl, { user: "admin", tenant: name });
  t.deepEqual(ok(t, await copy.call("GET", SCRIPTS), "copied scripts").body, expected.scripts);
  t.deepEqual(ok(t, await copy.call("GET", ARCHIVES), "copied archives").body, expected.archives);
  t.like(await publishedSet(t, name), { automatortypes: { shell: { scripts: { active: [{ name: "tool.sh", version: 2 }] } } } }, "live set published for the copy");
  const next = await copy.upload(tool, "echo v4");
  t.deepEqual(next.body, { name: "tool.sh", version: 4, status: "inactive" }, "the copy continues the version numbers");

  // The copy is its own: changing it leaves the superadmin's alone.
  await post(t, copy, `${tool}/versions/1/stage`);
  t.deepEqual(await statuses(su, tool), { 1: "inactive", 2: "recalled", 3: "staged" });

  // Idempotent: copying again copies no bytes for versions already there, and removes what the source lacks.
  const again = await callEndpoint(sys.nc, "plugins.copyTenant", { from: SUPERADMIN_TENANT, to: name });
  t.deepEqual(again, { resources: 2, versions: 4, copied: 0 });
  t.deepEqual(ok(t, await copy.call("GET", SCRIPTS), "after a second copy").body, expected.scripts);

  const plain = await createTenant(sys.baseUrl, "noboot");
  t.deepEqual(ok(t, await api(sys.baseUrl, "GET", SCRIPTS, plain.admin), "no bootstrap").body, {}, "without bootstrap nothing is copied");
  await post(t, copy, `${tool}/versions/1/stage`);
  const dup = await api(sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name, workers: 0 }, bootstrap: true } });
  assertError(t, dup, 409, "bootstrap of an existing tenant");
  t.deepEqual(await statuses(copy, tool), { 1: "staged", 2: "recalled", 3: "inactive" }, "a refused create copies nothing over it");
});

/** Metadata keys and stored objects of a tenant's plugin resources. */
async function storedResourcesOf(t: T, tenant: string): Promise<{ keys: string[]; objects: string[] }> {
  const prefix = `${keyToken(tenant)}.`;
  const keys = (await listKeys(await openBucket(t.context.sys.nc, buckets.pluginResources))).filter((k) => k.startsWith(prefix));
  const store = await new Objm(t.context.sys.nc).open(objectStores.pluginResources);
  const objects = (await store.list()).map((o) => o.name).filter((n) => n.startsWith(prefix));
  return { keys, objects };
}

test("plugins - deleting a tenant removes its resources; a new tenant of the same name starts with none", async (t) => {
  const { sys } = t.context;
  const c = await tenantClient(t, "gone");
  await put(t, c, `${SCRIPTS}/tool.sh`, "echo 1");
  await put(t, c, `${ARCHIVES}/kit`, resourceArchive("kit"));
  await post(t, c, `${SCRIPTS}/tool.sh/versions/1/stage`);
  await post(t, c, "/plugins/sync");
  const before = await storedResourcesOf(t, c.name);
  t.is(before.keys.length, 2);
  t.is(before.objects.length, 2);

  assertOk(t, await api(sys.baseUrl, "DELETE", `/tenants/${c.name}`, SUPERADMIN), "delete the tenant");
  t.deepEqual(await storedResourcesOf(t, c.name), { keys: [], objects: [] }, "metadata and bytes are gone");
  t.like(await publishedSet(t, c.name), { automatortypes: {} }, "provisioners are told the set is empty");

  assertOk(t, await api(sys.baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name: c.name, workers: 0 } } }), "create the name again");
  const again = pluginClient(sys.baseUrl, { user: "admin", tenant: c.name });
  t.deepEqual(ok(t, await again.call("GET", SCRIPTS), "the new tenant's scripts").body, {});
  t.deepEqual((await again.upload(`${SCRIPTS}/tool.sh`, "echo new")).body, { name: "tool.sh", version: 1, status: "inactive" });
});

test("plugins - resources whose tenant vanished without a purge are removed by the janitor's second look", async (t) => {
  const { sys } = t.context;
  const c = await tenantClient(t, "orphan");
  await put(t, c, `${SCRIPTS}/left.sh`, "echo left");
  // The tenant record disappears behind tenancy's back (as if no plugins service was up when it was deleted).
  await (await openBucket(sys.nc, buckets.tenants)).delete(kvKey(c.name));
  const janitor = await startTenantJanitor({ nc: sys.nc, resources: await openResourceStore(sys.nc), log: silentLogger });
  t.teardown(() => janitor.stop());
  await janitor.sweep();
  t.is((await storedResourcesOf(t, c.name)).keys.length, 1, "one look is not enough: a bootstrap copies before the record exists");
  const purged = await janitor.sweep();
  t.true(purged.includes(c.name));
  t.deepEqual(await storedResourcesOf(t, c.name), { keys: [], objects: [] });
  const other = await tenantClient(t, "kept");
  await put(t, other, `${SCRIPTS}/mine.sh`, "echo mine");
  await janitor.sweep();
  await janitor.sweep();
  t.is((await storedResourcesOf(t, other.name)).keys.length, 1, "a living tenant's resources stay");
});
