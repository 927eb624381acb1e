/**
 * End to end through REST: failures injected through the `sim` provider's settings and `shell` scripts.
 * A failing CONFIRM is rolled back and retried (DELETE, CREATE, CONFIRM) until the cluster is incomplete; a
 * failing configure leaves the cluster inconsistent (and configurable again); a task that fails once is retried
 * and the cluster becomes active; quotas refuse creates with 409 and free up after delete; a busy cluster
 * answers 409 to every other operation.
 */
import { api, type Caller } from "../helpers/api.js";
import { assertError, assertOk, show } from "../helpers/assertions.js";
import {
  createActiveCluster,
  createCluster,
  readNodeEvents,
  waitForStatus,
  type E2eTenant,
  type PlanBody,
  type SimCatalogOptions,
  type StatusBody,
  getOk,
  tenantWithSimCatalog,
} from "../helpers/clusters.js";
import { eventually } from "../helpers/eventually.js";
import { testWithSystem, type SystemTest } from "../helpers/system-test.js";

// Ten tenants of 3 workers: two provisioners (capacity 20 each) so that every tenant gets its workers.
const test = testWithSystem({ clusters: 1, provisioners: 2, reconcileIntervalMs: 500 });
type T = SystemTest;

const tenantWithCatalog = (t: T, prefix: string, catalog: SimCatalogOptions = {}, tenant: Record<string, unknown> = {}): Promise<E2eTenant> =>
  tenantWithSimCatalog(t.context.sys, prefix, { catalog, tenant });

const get = <B = any>(t: T, caller: Caller, path: string): Promise<B> => getOk<B>(t.context.sys.baseUrl, caller, path);

interface NodeAction {
  taskId: string;
  service: string;
  action: string;
  status: string;
  stderr?: string;
}

const historyOf = (node: { actions: NodeAction[] }, service?: string) =>
  node.actions.filter((a) => service === undefined || a.service === service).map((a) => `${a.action} ${a.status}`);

/** The provider `digitalocean` fails every CONFIRM. */
const failConfirm: SimCatalogOptions = { providerOverrides: { digitalocean: { fail_confirm: "true" } } };

test("fail_confirm: CONFIRM is rolled back and retried as DELETE, CREATE, CONFIRM, then the cluster is incomplete and can be deleted", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "failconfirm", failConfirm);
  const user = tenant.user;
  const id = await createCluster(baseUrl, user, { name: "fc", clusterTemplate: "webapp", numMachines: 2, provider: "digitalocean" });
  const status = await waitForStatus(baseUrl, user, id, "incomplete");
  t.like(status, { clusterid: id, status: "incomplete", action: "cluster_create", actionstatus: "failed" });
  t.true(status.stepscompleted < status.stepstotal);

  const cluster = await get(t, user, `/clusters/${id}`);
  const fullRollback = [
    "CREATE complete",
    "CONFIRM failed",
    "DELETE complete",
    "CREATE complete",
    "CONFIRM failed",
    "DELETE complete",
    "CREATE complete",
    "CONFIRM failed",
  ];
  // The first node out of attempts fails the plan: the other finishes the step it is running and goes no further.
  const histories = (cluster.nodes as Array<{ actions: NodeAction[] }>).map((node) => historyOf(node));
  t.true(histories.some((h) => JSON.stringify(h) === JSON.stringify(fullRollback)), "one node used all its attempts");
  for (const [i, node] of (cluster.nodes as Array<{ id: string; actions: NodeAction[] }>).entries()) {
    const h = histories[i] ?? [];
    t.deepEqual(h, fullRollback.slice(0, h.length), `history of ${node.id} follows the rollback order`);
    t.true(h.length >= 2, `${node.id} ran its first CONFIRM`);
    const confirms = (node.actions as NodeAction[]).filter((a) => a.action === "CONFIRM");
    t.true(confirms.every((a) => /fail_confirm/.test(a.stderr ?? "")), "the failed attempts keep the provider's stderr");
    // The rollback runs as retries of the plan's CONFIRM task.
    const confirmTask = confirms[0]?.taskId;
    t.true((node.actions as NodeAction[]).slice(1).every((a) => a.taskId === confirmTask));
  }
  // The plan itself is unchanged: CREATE, CONFIRM, ...
  const plan = (await get<PlanBody[]>(t, user, `/clusters/${id}/plans`))[0];
  t.is(plan?.action, "CLUSTER_CREATE");
  t.deepEqual(plan?.stages[1]?.map((x) => x.taskName), ["CONFIRM", "CONFIRM"]);

  // Only delete is allowed on an incomplete cluster.
  for (const [method, path, body] of [
    ["PUT", `/clusters/${id}/config`, { config: {} }],
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/start`, undefined],
    ["POST", `/clusters/${id}/services/restart`, undefined],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
  ] as const) {
    assertError(t, await api(baseUrl, method, path, { ...user, ...(body ? { body } : {}) }), 409, `${method} ${path} on an incomplete cluster`);
  }
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, user), "delete an incomplete cluster");
  t.like(await waitForStatus(baseUrl, user, id, "terminated"), { action: "cluster_delete", actionstatus: "complete" });
  const deleted = await get(t, user, `/clusters/${id}`);
  for (const node of deleted.nodes) t.is(historyOf(node).at(-1), "DELETE complete");
});

test("events: every machine the provider creates and deletes is a node.created / node.deleted event, rollbacks included", async (t) => {
  const { baseUrl, nc } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "failevents", failConfirm);
  const user = tenant.user;
  const id = await createCluster(baseUrl, user, { name: "fe", clusterTemplate: "webapp", numMachines: 1, provider: "digitalocean" });
  await waitForStatus(baseUrl, user, id, "incomplete");
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, user), "delete");
  await waitForStatus(baseUrl, user, id, "terminated");
  const node = (await get(t, user, `/clusters/${id}`)).nodes[0];
  // The machine's life as the provider saw it: created, deleted (rollback), created, ... deleted (cluster delete).
  const lifecycle = (node.actions as NodeAction[])
    .filter((a) => (a.action === "CREATE" || a.action === "DELETE") && a.status === "complete")
    .map((a) => (a.action === "CREATE" ? "node.created" : "node.deleted"));
  t.deepEqual(lifecycle, ["node.created", "node.deleted", "node.created", "node.deleted", "node.created", "node.deleted"]);

  const events = await eventually(
    async () => {
      const all = await readNodeEvents(nc, tenant.name);
      const mine = all.filter((e) => e.data.nodeId === node.id);
      return mine.some((e) => e.data.type === "node.deleted") ? mine : false;
    },
    { what: "node events", timeoutMs: 10_000, intervalMs: 200 },
  );
  t.deepEqual(
    events.map((e) => e.data.type),
    lifecycle,
    "node usage is derived from these events: a machine re-created after a rollback must not look deleted",
  );
});

/**
 * `base`'s configure fails when the cluster config holds `BREAK_CONFIGURE` (the task file carries the config; the
 * word is split in the script because the task file carries the script too).
 */
const breakableConfigure: SimCatalogOptions = {
  scripts: {
    base: {
      configure: { script: 'if grep -q BREAK_CONF"IGURE" "$CORRAL_TASK_FILE"; then echo "configure refused" >&2; false; fi' },
    },
  },
};

test("a failing configure leaves the cluster inconsistent; it can be configured again", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "failconf", breakableConfigure);
  const user = tenant.user;
  const id = await createActiveCluster(baseUrl, user, { name: "cf", clusterTemplate: "webapp", numMachines: 2 });

  const broken = { BREAK_CONFIGURE: true };
  assertOk(t, await api(baseUrl, "PUT", `/clusters/${id}/config`, { ...user, body: { config: broken, restart: false } }), "configure");
  const status = await waitForStatus(baseUrl, user, id, "inconsistent");
  t.like(status, { status: "inconsistent", action: "cluster_configure", actionstatus: "failed" });
  t.deepEqual(await get(t, user, `/clusters/${id}/config`), broken);
  const cluster = await get(t, user, `/clusters/${id}`);
  for (const node of cluster.nodes) {
    const attempts = (node.actions as NodeAction[]).filter((a) => a.service === "base" && a.action === "CONFIGURE");
    // one at create, then the failed attempts of the configure job
    t.is(attempts[0]?.status, "complete");
    const failed = attempts.slice(1);
    t.true(failed.length >= 1 && failed.every((a) => a.status === "failed"), `configure attempts on ${node.id}: ${JSON.stringify(failed)}`);
    t.true(failed.every((a) => /configure refused/.test(a.stderr ?? "")));
  }
  t.is(
    (await get<any[]>(t, user, "/clusters?status=inconsistent")).map((c) => c.id).join(),
    id,
    "the list filter finds inconsistent clusters",
  );

  // Inconsistent: service operations and add services are refused; configure and delete are allowed.
  for (const [method, path, body] of [
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/nginx/start`, undefined],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
  ] as const) {
    assertError(t, await api(baseUrl, method, path, { ...user, ...(body ? { body } : {}) }), 409, `${method} ${path} on an inconsistent cluster`);
  }
  const good = { app: { workers: 4 } };
  assertOk(t, await api(baseUrl, "PUT", `/clusters/${id}/config`, { ...user, body: { config: good } }), "configure again");
  t.like(await waitForStatus(baseUrl, user, id, "active"), { action: "cluster_configure_with_restart", actionstatus: "complete" });
  t.deepEqual(await get(t, user, `/clusters/${id}/config`), good);
});

test("a task that fails once is retried and the cluster becomes active; one that always fails makes it incomplete", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "flaky", {
    scripts: {
      // The node's working directory keeps a marker between attempts.
      postgresql: { install: { script: 'test -f .ok-postgresql-install || { touch .ok-postgresql-install; echo "first attempt fails" >&2; exit 1; }' } },
      redis: { install: { script: "false" } },
    },
  });
  const user = tenant.user;
  const id = await createCluster(baseUrl, user, { name: "flaky", clusterTemplate: "webapp", numMachines: 2 });
  const status = await waitForStatus(baseUrl, user, id, "active");
  t.like(status, { action: "cluster_create", actionstatus: "complete" });
  t.is(status.stepscompleted, status.stepstotal);
  const cluster = await get(t, user, `/clusters/${id}`);
  const databaseNode = cluster.nodes.find((n: any) => n.services.includes("postgresql"));
  t.deepEqual(historyOf(databaseNode, "postgresql"), ["INSTALL failed", "INSTALL complete", "CONFIGURE complete", "INITIALIZE complete", "START complete"]);
  const installs = (databaseNode.actions as NodeAction[]).filter((a) => a.service === "postgresql" && a.action === "INSTALL");
  t.is(installs[0]?.taskId, installs[1]?.taskId, "the retry is the same task");
  t.regex(installs[0]?.stderr ?? "", /first attempt fails/);
  for (const node of cluster.nodes) {
    if (node === databaseNode) continue;
    t.true((node.actions as NodeAction[]).every((a) => a.status === "complete"));
  }

  // Always failing: retried a bounded number of times, then the create fails.
  const bad = await createCluster(baseUrl, user, { name: "doomed", clusterTemplate: "webapp", numMachines: 1, services: ["base", "redis"] });
  t.like(await waitForStatus(baseUrl, user, bad, "incomplete"), { action: "cluster_create", actionstatus: "failed" });
  const doomed = (await get(t, user, `/clusters/${bad}`)).nodes[0];
  const attempts = historyOf(doomed, "redis");
  t.true(attempts.length >= 2 && attempts.every((a) => a === "INSTALL failed"), `redis attempts: ${attempts.join(", ")}`);
  t.false((doomed.actions as NodeAction[]).some((a) => a.action === "START"), "nothing after the failed stage runs");
});

test("quotas: maxClusters and maxNodes refuse creates with 409; usage frees up after delete", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "quota", {}, { maxClusters: 2, maxNodes: 5 });
  const user = tenant.user;
  const a = await createActiveCluster(baseUrl, user, { name: "qa", clusterTemplate: "webapp", numMachines: 3 });

  const tooMany = await api(baseUrl, "POST", "/clusters", { ...user, body: { name: "qb", clusterTemplate: "webapp", numMachines: 3 } });
  assertError(t, tooMany, 409, "3 + 3 nodes over maxNodes 5");
  t.regex(tooMany.body.message, /maxNodes/);

  const b = await createActiveCluster(baseUrl, user, { name: "qb", clusterTemplate: "webapp", numMachines: 2 });
  const third = await api(baseUrl, "POST", "/clusters", { ...tenant.other, body: { name: "qc", clusterTemplate: "webapp", numMachines: 1 } });
  assertError(t, third, 409, "a third cluster over maxClusters 2 (quotas are per tenant, not per user)");
  t.regex(third.body.message, /maxClusters/);
  t.deepEqual((await get<any[]>(t, tenant.admin, "/clusters")).map((c) => c.id).sort(), [a, b].sort(), "refused creates leave nothing behind");

  // Lowering the quota below current use is refused by tenancy (the clusters service keeps the usage).
  const lower = await api(baseUrl, "PUT", `/tenants/${tenant.name}`, {
    user: "admin",
    tenant: "superadmin",
    body: { tenant: { name: tenant.name, workers: 3, maxClusters: 1, maxNodes: 5 } },
  });
  assertError(t, lower, 409, "maxClusters below current use");

  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${a}`, user), "delete qa");
  await waitForStatus(baseUrl, user, a, "terminated");
  const c = await createActiveCluster(baseUrl, user, { name: "qc", clusterTemplate: "webapp", numMachines: 3 });
  t.truthy(c, "room again after the delete");
  assertError(
    t,
    await api(baseUrl, "POST", "/clusters", { ...user, body: { name: "qd", clusterTemplate: "webapp", numMachines: 1 } }),
    409,
    "full again",
  );
});

test("a busy cluster answers 409 to every other operation", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "busy", {
    providerOverrides: { "aws-us-east-1": { delay_create_ms: "3000", delay_delete_ms: "2000" } },
  });
  const user = tenant.user;
  const id = await createCluster(baseUrl, user, { name: "slow", clusterTemplate: "webapp", numMachines: 1, provider: "aws-us-east-1" });

  const operations = [
    ["DELETE", `/clusters/${id}`, undefined],
    ["PUT", `/clusters/${id}/config`, { config: { a: 1 } }],
    ["PUT", `/clusters/${id}/config`, { config: { a: 1 }, restart: false }],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/start`, undefined],
    ["POST", `/clusters/${id}/services/restart`, undefined],
    ["POST", `/clusters/${id}/services/nginx/stop`, undefined],
    ["POST", `/clusters/${id}/services/nginx/start`, undefined],
    ["POST", `/clusters/${id}/services/nginx/restart`, undefined],
  ] as const;
  const tryAll = async (when: string) => {
    for (const [method, path, body] of operations) {
      const res = await api(baseUrl, method, path, { ...user, ...(body ? { body } : {}) });
      assertError(t, res, 409, `${method} ${path} ${JSON.stringify(body ?? null)} ${when}`);
    }
  };
  t.is((await get<StatusBody>(t, user, `/clusters/${id}/status`)).status, "pending");
  await tryAll("while creating");
  const pending = await get<StatusBody>(t, user, `/clusters/${id}/status`);
  t.like(pending, { status: "pending", action: "cluster_create", actionstatus: "running" }, "the refused operations changed nothing");
  t.is((await get(t, user, `/clusters/${id}`)).jobs.length, 1);
  assertError(t, await api(baseUrl, "POST", `/clusters/${id}`, { ...user, body: { expireTime: Date.now() + 60_000 } }), 409, "lease while pending");

  await waitForStatus(baseUrl, user, id, "active");
  t.deepEqual(await get(t, user, `/clusters/${id}/config`), (await get(t, user, `/clusters/${id}`)).clusterTemplate.defaults.config, "config unchanged");
  t.is((await get(t, user, `/clusters/${id}`)).jobs.length, 1);

  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, user), "delete");
  t.like(await get<StatusBody>(t, user, `/clusters/${id}/status`), { status: "pending", action: "cluster_delete" });
  await tryAll("while deleting");
  await waitForStatus(baseUrl, user, id, "terminated");

  // Terminated is final.
  for (const [method, path, body] of operations) {
    const res = await api(baseUrl, method, path, { ...user, ...(body ? { body } : {}) });
    assertError(t, res, method === "DELETE" ? "4xx" : 409, `${method} ${path} on a terminated cluster`);
  }
  t.is((await get(t, user, `/clusters/${id}`)).jobs.length, 2);
});

test("concurrent operations on one cluster: exactly one starts, the others are 409", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "race");
  const user = tenant.user;
  const id = await createActiveCluster(baseUrl, user, { name: "race", clusterTemplate: "webapp", numMachines: 2 });
  const requests = [
    ["POST", `/clusters/${id}/services/stop`, undefined],
    ["POST", `/clusters/${id}/services/start`, undefined],
    ["POST", `/clusters/${id}/services/restart`, undefined],
    ["POST", `/clusters/${id}/services/nginx/stop`, undefined],
    ["PUT", `/clusters/${id}/config`, { config: { race: 1 } }],
    ["PUT", `/clusters/${id}/config`, { config: { race: 2 }, restart: false }],
    ["POST", `/clusters/${id}/services`, { services: ["redis"] }],
    ["DELETE", `/clusters/${id}`, undefined],
  ] as const;
  const answers = await Promise.all(requests.map(([method, path, body]) => api(baseUrl, method, path, { ...user, ...(body ? { body } : {}) })));
  const statuses = answers.map((r) => r.status);
  t.is(statuses.filter((s) => s === 200).length, 1, `exactly one 200: ${statuses.join(", ")}`);
  t.is(statuses.filter((s) => s === 409).length, requests.length - 1, `the others 409: ${answers.map(show).join(" | ")}`);
  const winner = requests[statuses.indexOf(200)];
  const expected = {
    stop: ["stop_services", "STOP_SERVICES"],
    start: ["start_services", "START_SERVICES"],
    restart: ["restart_services", "RESTART_SERVICES"],
  } as const;
  const [action, planAction] =
    winner === undefined
      ? ["?", "?"]
      : winner[0] === "DELETE"
        ? ["cluster_delete", "CLUSTER_DELETE"]
        : winner[0] === "PUT"
          ? winner[2] !== undefined && "restart" in winner[2]
            ? ["cluster_configure", "CLUSTER_CONFIGURE"]
            : ["cluster_configure_with_restart", "CLUSTER_CONFIGURE_WITH_RESTART"]
          : winner[1].endsWith("/services")
            ? ["add_services", "ADD_SERVICES"]
            : expected[winner[1].split("/").at(-1) as keyof typeof expected];
  const cluster = await get(t, user, `/clusters/${id}`);
  t.is(cluster.jobs.length, 2, `one job started (${winner?.[0]} ${winner?.[1]})`);
  // The job that runs is the winner's: its plan, its outcome.
  const plan = (await get<PlanBody[]>(t, user, `/clusters/${id}/plans`))[0];
  t.is(plan?.action, planAction, `the stored plan is the winner's (${winner?.[0]} ${winner?.[1]})`);
  const settled = await waitForStatus(baseUrl, user, id, action === "cluster_delete" ? "terminated" : "active").catch((err: Error) => err);
  t.false(settled instanceof Error, `the winner's job (${action}) succeeds: ${String(settled)}`);
  if (!(settled instanceof Error)) t.like(settled, { action, actionstatus: "complete" });
});

test("concurrent creates never exceed maxClusters / maxNodes", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(t, "racequota", {}, { maxClusters: 3, maxNodes: 100 });
  const answers = await Promise.all(
    Array.from({ length: 8 }, (_, i) =>
      api(baseUrl, "POST", "/clusters", { ...tenant.user, body: { name: `r${i}`, clusterTemplate: "webapp", numMachines: 1 } }),
    ),
  );
  const ok = answers.filter((r) => r.status === 200);
  t.is(ok.length, 3, answers.map(show).join(" | "));
  t.true(answers.every((r) => r.status === 200 || r.status === 409));
  t.is((await get<any[]>(t, tenant.admin, "/clusters")).length, 3);

  const nodesTenant = await tenantWithCatalog(t, "racenodes", {}, { maxClusters: 100, maxNodes: 5 });
  const byNodes = await Promise.all(
    Array.from({ length: 6 }, (_, i) =>
      api(baseUrl, "POST", "/clusters", { ...nodesTenant.user, body: { name: `n${i}`, clusterTemplate: "webapp", numMachines: 2 } }),
    ),
  );
  t.is(byNodes.filter((r) => r.status === 200).length, 2, byNodes.map(show).join(" | "));
  const ids = ok.map((r) => r.body.id as string);
  for (const id of ids) await waitForStatus(baseUrl, tenant.user, id, "active");
});

test("a failing DELETE leaves the cluster incomplete, its nodes still counted", async (t) => {
  const { baseUrl } = t.context.sys;
  const tenant = await tenantWithCatalog(
    t,
    "faildelete",
    { providerOverrides: { digitalocean: { fail_delete: "true" } } },
    { maxClusters: 1 },
  );
  const user = tenant.user;
  const id = await createActiveCluster(baseUrl, user, { name: "sticky", clusterTemplate: "webapp", numMachines: 1, provider: "digitalocean" });
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, user), "delete");
  t.like(await waitForStatus(baseUrl, user, id, "incomplete"), { action: "cluster_delete", actionstatus: "failed" });
  const node = (await get(t, user, `/clusters/${id}`)).nodes[0];
  const deletes = historyOf(node).filter((a) => a.startsWith("DELETE"));
  t.true(deletes.length >= 1 && deletes.every((a) => a === "DELETE failed"), deletes.join(", "));
  // The machine still exists: it still counts against the quota.
  assertError(
    t,
    await api(baseUrl, "POST", "/clusters", { ...user, body: { name: "next", clusterTemplate: "webapp", numMachines: 1 } }),
    409,
    "quota still used by the incomplete cluster",
  );
  // Deleting again is allowed (and fails again).
  assertOk(t, await api(baseUrl, "DELETE", `/clusters/${id}`, user), "delete again");
  await waitForStatus(baseUrl, user, id, "incomplete");
});
