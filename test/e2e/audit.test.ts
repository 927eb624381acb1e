import anyTest, { type TestFn } from "ava";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import {
  clusterEventFilter,
  auditSubject,
  clusterEventSubject,
  compareAuditIds,
  consumers,
  decode,
  encode,
  entriesOfAuditMessage,
  streams,
  type AuditEntry,
  type AuditPage,
  type ClusterStreamEvent,
  type ListedAuditEntry,
  type PlanFinishedEvent,
} from "@corral/contracts";
import { api, type ApiResponse, type RequestOptions } from "../helpers/api.js";
import { readEvents, simFixtureCatalog, waitForAssignment } from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, requestToken, revoke, tokenFor } from "../helpers/tokens.js";

/**
 * The audit log against real servers with security on: the gateway and the token server record changes and
 * refusals, the metrics service the end of every plan (on the `sim` provider), `GET /audit` answers them newest
 * first and paged, each tenant admin only its tenant's.
 */
interface Session {
  token: string;
  call(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<any>>;
}
const test = anyTest as TestFn<{ sys: TestSystem; dir: string; session(user: string, password: string, tenant: string): Promise<Session> }>;

/** A value in a request body that no entry may hold. */
const BODY_MARKER = "body-marker-5f1c";

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-e2e-audit-"));
  const realmfile = join(t.context.dir, "realm.properties");
  await writeFile(
    realmfile,
    ["root: rootpw,superadmin", "opsa: opsapw,admin:acme", "opsb: opsbpw,admin:beta", "opsg: opsgpw,admin:gamma", "alice: alicepw", "bob: bobpw", "carol: carolpw"].join(
      "\n",
    ),
  );
  const sys = await startSystem({ metrics: 1, clusters: 1, provisioners: 1, security: { config: { "security.authentication.basic.realmfile": realmfile } } });
  t.context.sys = sys;
  t.context.session = async (user, password, tenant) => {
    const token = await tokenFor(sys.tokenUrl!, user, password, tenant);
    return {
      token,
      call: (method, path, options = {}) =>
        api(sys.baseUrl, method, path, { user, tenant, ...options, headers: { ...bearer(token), ...options.headers } }),
    };
  };
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** Every entry `reader` may read that `query` selects, all pages followed. */
async function allEntries(reader: Session, query = ""): Promise<ListedAuditEntry[]> {
  const entries: ListedAuditEntry[] = [];
  let after = "";
  for (;;) {
    const r = await reader.call("GET", `/audit?limit=1000${query}${after ? `&after=${after}` : ""}`);
    if (r.status !== 200) throw new Error(`GET /audit: ${r.status} ${r.text}`);
    const page = r.body as AuditPage;
    entries.push(...page.entries);
    if (!page.next) return entries;
    after = page.next;
  }
}

/** Waits until `reader` sees an entry like `like`, and answers it. */
async function entryLike(reader: Session, like: Partial<ListedAuditEntry>): Promise<ListedAuditEntry> {
  let found: ListedAuditEntry | undefined;
  await eventually(
    async () => {
      const entries = await allEntries(reader);
      found = entries.find((e) => Object.entries(like).every(([k, v]) => e[k as keyof ListedAuditEntry] === v));
      return found !== undefined;
    },
    { what: `an audit entry like ${JSON.stringify(like)}`, timeoutMs: 10_000 },
  );
  return found!;
}

test.serial("changes, refusals and logins are recorded once, without bodies or secrets", async (t) => {
  const { session } = t.context;
  const root = await session("root", "rootpw", "superadmin");
  t.is((await root.call("POST", "/tenants", { body: { tenant: { name: "acme", workers: 0 } } })).status, 200);
  t.is((await root.call("POST", "/tenants", { body: { tenant: { name: "beta", workers: 0 } } })).status, 200);
  const opsa = await session("opsa", "opsapw", "acme");
  const opsb = await session("opsb", "opsbpw", "beta");
  const alice = await session("alice", "alicepw", "acme");

  const created = await opsa.call("POST", "/services", {
    body: { name: "svc-a", description: BODY_MARKER, provisioner: { actions: {} } },
  });
  t.is(created.status, 200, created.text);
  const deleted = await opsa.call("DELETE", "/services/svc-a");
  t.is(deleted.status, 200, deleted.text);
  t.is((await alice.call("POST", "/services", { body: { name: "x", provisioner: { actions: {} } } })).status, 401);
  t.is((await alice.call("GET", "/metrics/queues")).status, 403);
  const conflict = await root.call("POST", "/tenants", { body: { tenant: { name: "acme", workers: 0 } } });
  t.is(conflict.status, 409, conflict.text);
  const reads = await opsa.call("GET", "/services");
  t.is(reads.status, 200);

  const create = await entryLike(opsa, { action: "tenancy.catalog.services.create", method: "POST", status: 200 });
  t.like(create, { tenant: "acme", user: "opsa", role: "admin", route: "/services", target: "svc-a", source: "127.0.0.1" });
  t.regex(create.requestId, /.+/);
  t.true(Date.now() - Date.parse(create.time) < 60_000);
  const remove = await entryLike(opsa, { method: "DELETE", status: 200 });
  t.like(remove, { tenant: "acme", user: "opsa", route: "/services/:name", target: "svc-a" });
  t.like(await entryLike(opsa, { user: "alice", status: 401 }), { tenant: "acme", role: "user", method: "POST", route: "/services" });
  t.like(await entryLike(opsa, { status: 403 }), { user: "alice", role: "user", method: "GET", route: "/metrics/queues", action: "metrics.queues" });
  t.like(await entryLike(root, { status: 409 }), { tenant: "superadmin", user: "root", role: "superadmin", route: "/tenants" });
  t.like(await entryLike(opsa, { action: "auth.login", user: "alice" }), { tenant: "acme", route: "/token", method: "GET", status: 200 });

  const acme = await allEntries(opsa);
  t.is(acme.filter((e) => e.requestId === create.requestId).length, 1, "recorded once");
  t.false(acme.some((e) => e.method === "GET" && e.status === 200 && e.action !== "auth.login"), "a read that succeeded is not recorded");
  const text = JSON.stringify(await allEntries(root));
  for (const secret of [BODY_MARKER, "alicepw", "opsapw", "rootpw", alice.token, opsa.token]) t.false(text.includes(secret), secret);
  const schemaKeys = ["id", "time", "tenant", "user", "role", "method", "route", "action", "target", "status", "requestId", "source", "operation", "failedTask"];
  t.true(acme.every((e) => Object.keys(e).every((k) => schemaKeys.includes(k))), "no field beyond the entry's");

  // A refused token and a failed login are recorded too.
  const badToken = await api(t.context.sys.baseUrl, "GET", "/services", { user: "bob", tenant: "beta", headers: bearer("not-a-token") });
  t.is(badToken.status, 401);
  t.is((await requestToken(t.context.sys.tokenUrl!, "bob", "wrong", "beta")).status, 401);
  t.like(await entryLike(root, { requestId: badToken.headers.get("x-request-id")! }), { tenant: "", user: "", status: 401, method: "GET" });
  t.like(await entryLike(opsb, { action: "auth.login", user: "bob", status: 401 }), { tenant: "beta" });
  t.is((await revoke(t.context.sys.tokenUrl!, alice.token)).status, 200);
  t.like(await entryLike(opsa, { action: "auth.revokeToken", user: "alice" }), { method: "DELETE", status: 200, route: "/token" });
});

test.serial("a tenant admin reads only its tenant's entries; a user is refused", async (t) => {
  const { session } = t.context;
  const opsa = await session("opsa", "opsapw", "acme");
  const opsb = await session("opsb", "opsbpw", "beta");
  const bob = await session("bob", "bobpw", "beta");
  t.is((await opsb.call("POST", "/services", { body: { name: "svc-b", provisioner: { actions: {} } } })).status, 200);
  await entryLike(opsb, { action: "tenancy.catalog.services.create", target: "svc-b" });
  const root = await session("root", "rootpw", "superadmin");
  await entryLike(root, { action: "tenancy.catalog.services.create", target: "svc-b" });
  const acme = await allEntries(opsa);
  t.true(acme.length > 0);
  t.true(acme.every((e) => e.tenant === "acme"), "acme's admin reads acme's entries only");
  t.false(acme.some((e) => e.user === "bob" || e.user === "opsb" || e.target === "svc-b"));
  t.true((await allEntries(opsb)).every((e) => e.tenant === "beta"));
  const refused = await bob.call("GET", "/audit");
  t.is(refused.status, 401, refused.text);
  t.false(JSON.stringify(refused.body ?? {}).includes("entries"));
});

test.serial("pages go newest first, follow on with next, and filter", async (t) => {
  const { session } = t.context;
  const opsa = await session("opsa", "opsapw", "acme");
  for (let i = 0; i < 5; i++) {
    t.is((await opsa.call("POST", "/services", { body: { name: `page-${i}`, provisioner: { actions: {} } } })).status, 200);
  }
  await entryLike(opsa, { target: "page-4" });
  const query = "&action=tenancy.catalog.services.create&user=opsa";
  const everything = (await allEntries(opsa, query)).filter((e) => e.target.startsWith("page-"));
  t.deepEqual(
    everything.map((e) => e.target),
    ["page-4", "page-3", "page-2", "page-1", "page-0"],
  );
  const seen: string[] = [];
  let after = "";
  let pages = 0;
  do {
    const r = await opsa.call("GET", `/audit?limit=2${query}${after ? `&after=${after}` : ""}`);
    t.is(r.status, 200, r.text);
    const page = r.body as AuditPage;
    t.true(page.entries.length <= 2);
    seen.push(...page.entries.map((e) => e.id));
    after = page.next ?? "";
    pages++;
  } while (after && pages < 50);
  const ids = (await allEntries(opsa, query)).map((e) => e.id);
  t.deepEqual(seen, ids, "pages of 2 hold the same entries, in the same order, as one page");
  t.true(pages >= 3);
  t.deepEqual([...ids].sort((a, b) => compareAuditIds(b, a)), ids, "newest first");
  t.true(ids.every((id) => /^[1-9][0-9]*\.[0-9]+$/.test(id)), "ids are <seq>.<index>");

  const byTarget = await allEntries(opsa, "&target=page-2");
  t.deepEqual(byTarget.map((e) => e.target), ["page-2"]);
  const prefix = await allEntries(opsa, "&action=tenancy.");
  t.true(prefix.length >= 5 && prefix.every((e) => e.action.startsWith("tenancy.")));
  const future = await allEntries(opsa, `&since=${Date.now() + 60_000}`);
  t.deepEqual(future, []);
  const past = await allEntries(opsa, "&until=2000-01-01T00:00:00Z");
  t.deepEqual(past, []);
  t.is((await opsa.call("GET", "/audit?since=yesterday")).status, 400);
  t.is((await opsa.call("GET", "/audit?after=abc")).status, 400);
});

test.serial("changes made at once share batch messages, and pages with after cursors give each once, newest first", async (t) => {
  const { session, sys } = t.context;
  const opsa = await session("opsa", "opsapw", "acme");
  const jsm = await jetstreamManager(sys.nc);
  const firstSeq = (await jsm.streams.info(streams.audit)).state.last_seq + 1;
  const names = Array.from({ length: 30 }, (_, i) => `burst-${i}`);
  const created = await Promise.all(names.map((name) => opsa.call("POST", "/services", { body: { name, provisioner: { actions: {} } } })));
  t.true(created.every((r) => r.status === 200));
  const query = "&action=tenancy.catalog.services.create&user=opsa";
  await eventually(async () => (await allEntries(opsa, query)).filter((e) => e.target.startsWith("burst-")).length === names.length, {
    what: "the burst's entries",
    timeoutMs: 10_000,
  });

  // The gateway published them in batches: a message of acme's subject holds several entries, and only acme's.
  const { state } = await jsm.streams.info(streams.audit);
  const held: AuditEntry[][] = [];
  for (let seq = firstSeq; seq <= state.last_seq; seq++) {
    const stored = await jsm.streams.getMessage(streams.audit, { seq });
    if (stored?.subject === auditSubject("acme")) held.push(entriesOfAuditMessage(decode(stored.data)));
  }
  t.true(held.some((entries) => entries.length > 1), `messages of ${held.map((e) => e.length).join(", ")} entries`);
  t.true(held.flat().every((e) => e.tenant === "acme"));

  const everything = await allEntries(opsa, query);
  for (const limit of [1, 4, 7]) {
    const seen: ListedAuditEntry[] = [];
    let after = "";
    do {
      const page = (await opsa.call("GET", `/audit?limit=${limit}${query}${after ? `&after=${after}` : ""}`)).body as AuditPage;
      seen.push(...page.entries);
      after = page.next ?? "";
    } while (after);
    t.deepEqual(seen.map((e) => e.id), everything.map((e) => e.id), `pages of ${limit}`);
  }
  const burst = everything.filter((e) => e.target.startsWith("burst-"));
  t.deepEqual(burst.map((e) => e.target).sort(), [...names].sort(), "each entry once");
  t.deepEqual([...everything].sort((a, b) => compareAuditIds(b.id, a.id)), everything, "newest first");
});

/** Waits until the cluster's status is `status` (the plan it runs has ended). */
async function statusOf(caller: Session, id: string, status: string): Promise<void> {
  await eventually(
    async () => {
      const r = await caller.call("GET", `/clusters/${id}/status`);
      return r.status === 200 && (r.body as { status: string }).status === status;
    },
    { what: `cluster ${id} ${status}`, timeoutMs: 60_000 },
  );
}

/** The end of a cluster's plan as the events stream holds it (alone, or inside a progress). */
async function storedPlanEnd(t: { context: { sys: TestSystem } }, tenant: string, clusterId: string, planId: string): Promise<PlanFinishedEvent> {
  const events = await readEvents<ClusterStreamEvent>(t.context.sys.nc, clusterEventFilter(tenant, clusterId));
  const ends = events.flatMap(({ data }) => (data.type === "plan.progress" ? (data.then ?? []) : [data]));
  const end = ends.find((e): e is PlanFinishedEvent => e.type === "plan.finished" && e.planId === planId);
  if (!end) throw new Error(`no end of plan ${planId} on the events stream`);
  return end;
}

/** Waits until the plan-end feed has acknowledged everything the events stream holds for it. */
async function planEndsRead(t: { context: { sys: TestSystem } }): Promise<void> {
  const jsm = await jetstreamManager(t.context.sys.nc);
  await eventually(
    async () => {
      const info = await jsm.consumers.info(streams.events, consumers.planEnds);
      return info.num_pending === 0 && info.num_ack_pending === 0;
    },
    { what: "the plan-end feed caught up", timeoutMs: 10_000 },
  );
}

test.serial("the end of a plan is recorded once: who started it, the operation, the outcome and the failed task", async (t) => {
  const { session, sys } = t.context;
  const root = await session("root", "rootpw", "superadmin");
  t.is((await root.call("POST", "/tenants", { body: { tenant: { name: "gamma", workers: 2 } } })).status, 200);
  await waitForAssignment(sys.nc, "gamma");
  const opsg = await session("opsg", "opsgpw", "gamma");
  // The provider digitalocean fails every CONFIRM: its plan fails once the rollbacks are used up.
  const catalog = simFixtureCatalog({ providerOverrides: { digitalocean: { fail_confirm: "true" } } });
  const imported = await opsg.call("POST", "/import", { body: catalog });
  t.is(imported.status, 200, imported.text);
  const carol = await session("carol", "carolpw", "gamma");

  const created = await carol.call("POST", "/clusters", { body: { name: "fine", clusterTemplate: "webapp", numMachines: 1 } });
  t.is(created.status, 200, created.text);
  const fine = (created.body as { id: string }).id;
  const failing = await carol.call("POST", "/clusters", { body: { name: "broken", clusterTemplate: "webapp", numMachines: 1, provider: "digitalocean" } });
  t.is(failing.status, 200, failing.text);
  const broken = (failing.body as { id: string }).id;
  await statusOf(carol, fine, "active");
  await statusOf(carol, broken, "incomplete");

  const succeeded = await entryLike(opsg, { action: "plan.succeeded", target: fine });
  t.like(succeeded, { tenant: "gamma", user: "carol", role: "", method: "PLAN", route: "/clusters/:id/plans/:planId", operation: "CLUSTER_CREATE", status: 200, source: "" });
  t.is(succeeded.failedTask, undefined);
  const plans = (await carol.call("GET", `/clusters/${fine}/plans`)).body as Array<{ id: string }>;
  t.true(plans.some((p) => p.id === succeeded.requestId), "the request id is the plan's");

  const failed = await entryLike(opsg, { action: "plan.failed", target: broken });
  const node = ((await carol.call("GET", `/clusters/${broken}`)).body as { nodes: Array<{ id: string }> }).nodes[0]!.id;
  t.like(failed, { tenant: "gamma", user: "carol", method: "PLAN", operation: "CLUSTER_CREATE", status: 500, failedTask: `CONFIRM on ${node}` });

  // The same filters as for requests.
  t.deepEqual((await allEntries(opsg, "&action=plan.")).map((e) => e.target).sort(), [fine, broken].sort());
  t.deepEqual((await allEntries(opsg, `&action=plan.failed&user=carol&target=${broken}`)).map((e) => e.id), [failed.id]);

  // An end stored again (as the reconciler does after a crash) or delivered again to the feed (after a crash of
  // the metrics service before its ack) reaches the audit log under the same message id: it is dropped there.
  const end = await storedPlanEnd(t, "gamma", broken, failed.requestId);
  await jetstream(sys.nc).publish(clusterEventSubject("gamma", broken, "plan.finished"), encode(end), { msgID: `again-${failed.requestId}` });
  await planEndsRead(t);
  const ofPlan = async (planId: string) => (await allEntries(root, `&target=${broken}`)).filter((e) => e.requestId === planId);
  t.is((await ofPlan(failed.requestId)).length, 1, "recorded once");
  const opsa = await session("opsa", "opsapw", "acme");
  t.deepEqual(await allEntries(opsa, "&action=plan."), [], "another tenant's admin reads none of them");
});
