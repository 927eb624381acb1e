/**
 * Cluster helpers for the end-to-end tests: tenants with workers, the test catalog (`test/fixtures/catalog`) mapped
 * onto the `sim` provider type and the `shell` automator, and waiting for cluster states.
 *
 * Workers: tenants are created with `workers > 0`; tenancy's balancer assigns them to the running
 * provisioners (`test-p0`, ...), whose workers then pull the tenant's tasks.
 */
import { DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import { ASSIGNMENT_KEY, buckets, decode, eventSubject, streams } from "@corral/contracts";
import { openBucket } from "@corral/shared";
import type { NodeChanges, NodeEvent } from "@corral/clusters/testing";
import { api, SUPERADMIN, type ApiResponse, type Caller } from "./api.js";
import { show } from "./assertions.js";
import { uniqueName } from "./catalog.js";
import { eventually } from "./eventually.js";
import { rawFixtureCatalog } from "./fixture-catalog.js";

/** A tenant created for an end-to-end test, with its admin and two ordinary users. */
export interface E2eTenant {
  name: string;
  admin: Caller;
  user: Caller;
  other: Caller;
}

/** Creates a tenant (workers 2 unless told) and waits until the balancer has assigned its workers. */
export async function createWorkerTenant(
  baseUrl: string,
  nc: NatsConnection,
  prefix: string,
  tenant: Record<string, unknown> = {},
): Promise<E2eTenant> {
  const name = uniqueName(prefix);
  const res = await api(baseUrl, "POST", "/tenants", { ...SUPERADMIN, body: { tenant: { name, workers: 2, ...tenant } } });
  if (res.status !== 200) throw new Error(`creating tenant ${name} failed: HTTP ${res.status} ${res.text}`);
  const workers = Number(tenant["workers"] ?? 2);
  if (workers > 0) await waitForAssignment(nc, name);
  return {
    name,
    admin: { user: "admin", tenant: name },
    user: { user: "alice", tenant: name },
    other: { user: "bob", tenant: name },
  };
}

/** Waits until the worker assignment gives the tenant workers on some provisioner. */
export async function waitForAssignment(nc: NatsConnection, tenant: string, timeoutMs = 15_000): Promise<void> {
  const kv = await openBucket(nc, buckets.assignments);
  await eventually(
    async () => {
      const entry = await kv.get(ASSIGNMENT_KEY);
      if (!entry || entry.length === 0) return false;
      const assignment = decode<Record<string, Record<string, number>>>(entry.value);
      return Object.values(assignment).some((perTenant) => (perTenant[tenant] ?? 0) > 0);
    },
    { what: `workers of tenant ${tenant} assigned`, timeoutMs, intervalMs: 100 },
  );
}

export interface SimCatalogOptions {
  /** Admin fields every sim provider gets (e.g. `{fail_confirm: "true"}`). */
  providerFields?: Record<string, string>;
  /** Per provider name: its whole `provisioner` object (replaces the default one). */
  providerOverrides?: Record<string, Record<string, string>>;
  /**
   * Per provider name: its provider type instead of `sim` (e.g. `sim-secured`, which requires the user field
   * `sim_password`; the system's provisioners must carry it: `simSecured`).
   */
  providerTypes?: Record<string, string>;
  /** Per `service` then `action`: the shell `{script, args?}` (replaces `echo <service> <action>`). */
  scripts?: Record<string, Record<string, { script: string; args?: string }>>;
  /** Templates added to (or replacing, by name) the catalog's. */
  extraTemplates?: Record<string, any>[];
  /** Services added to (or replacing, by name) the catalog's (actions are used as given). */
  extraServices?: Record<string, any>[];
  /** Providers added (as given). */
  extraProviders?: Record<string, any>[];
}

/** The default `shell` action of a service: `echo <service> <action>`. */
export const echoAction = (service: string, action: string) => ({ type: "shell", fields: { script: "echo", args: `${service} ${action}` } });

/**
 * The test catalog as an import body, mapped onto what the in-process provisioners carry: every provider becomes
 * a `sim` provider of the same name (`provisioner: {}`, so no cloud credential travels), every service action, shell
 * or chef-solo, a `shell` action `echo <service> <action>`. Hardware types, image types and templates are kept as
 * written: their provider maps name the same providers.
 */
export function simFixtureCatalog(options: SimCatalogOptions = {}): Record<string, any[]> {
  const raw = rawFixtureCatalog();
  const providers = raw.providers.map((p: any) => ({
    name: p.name,
    description: p.description ?? "",
    providertype: options.providerTypes?.[p.name] ?? "sim",
    provisioner: options.providerOverrides?.[p.name] ?? { ...options.providerFields },
  }));
  const services = raw.services.map((s: any) => {
    const actions: Record<string, unknown> = {};
    for (const action of Object.keys(s.provisioner?.actions ?? {})) {
      const custom = options.scripts?.[s.name]?.[action];
      actions[action] = custom
        ? { type: "shell", fields: { script: custom.script, ...(custom.args !== undefined ? { args: custom.args } : {}) } }
        : echoAction(s.name, action);
    }
    return { ...s, provisioner: { ...s.provisioner, actions } };
  });
  const replaceByName = (list: any[], extra: any[] | undefined) => {
    const names = new Set((extra ?? []).map((e) => e.name));
    return [...list.filter((e) => !names.has(e.name)), ...(extra ?? [])];
  };
  return {
    providers: replaceByName(providers, options.extraProviders),
    hardwaretypes: raw.hardwaretypes,
    imagetypes: raw.imagetypes,
    services: replaceByName(services, options.extraServices),
    clustertemplates: replaceByName(raw.clustertemplates, options.extraTemplates),
  };
}

/** Imports {@link simFixtureCatalog} into the admin's tenant; throws unless 200. */
export async function importSimCatalog(baseUrl: string, admin: Caller, options: SimCatalogOptions = {}): Promise<void> {
  const res = await api(baseUrl, "POST", "/import", { ...admin, body: simFixtureCatalog(options) });
  if (res.status !== 200) throw new Error(`import failed: HTTP ${res.status} ${res.text}`);
}

export type ClusterStatus = "pending" | "active" | "incomplete" | "inconsistent" | "terminated";

export interface StatusBody {
  clusterid: string;
  status: ClusterStatus;
  action: string;
  actionstatus: string;
  stepstotal: number;
  stepscompleted: number;
}

/** Creates a cluster; throws unless 200; answers its id. */
export async function createCluster(baseUrl: string, caller: Caller, body: Record<string, unknown>): Promise<string> {
  const res = await api(baseUrl, "POST", "/clusters", { ...caller, body });
  if (res.status !== 200) throw new Error(`creating cluster ${JSON.stringify(body)} failed: HTTP ${res.status} ${res.text}`);
  const id = (res.body as { id?: unknown }).id;
  if (typeof id !== "string") throw new Error(`create answered no id: ${res.text}`);
  return id;
}

/**
 * Waits until the cluster settles (not pending) and answers the status body; throws when it settles in another
 * status than `expected`.
 */
export async function waitForStatus(
  baseUrl: string,
  caller: Caller,
  id: string,
  expected: ClusterStatus,
  timeoutMs = 30_000,
): Promise<StatusBody> {
  const body = await eventually(
    async () => {
      const r: ApiResponse<StatusBody> = await api(baseUrl, "GET", `/clusters/${id}/status`, caller);
      if (r.status !== 200) throw new Error(`status of ${id}: HTTP ${r.status} ${r.text}`);
      return r.body.status === "pending" && expected !== "pending" ? false : r.body;
    },
    { what: `cluster ${id} settled (expected ${expected})`, timeoutMs, intervalMs: 100 },
  );
  if (body.status !== expected) throw new Error(`cluster ${id} settled as ${body.status}, expected ${expected}: ${JSON.stringify(body)}`);
  return body;
}

/** Creates a cluster and waits for it to become `active`. */
export async function createActiveCluster(baseUrl: string, caller: Caller, body: Record<string, unknown>, timeoutMs = 30_000): Promise<string> {
  const id = await createCluster(baseUrl, caller, body);
  await waitForStatus(baseUrl, caller, id, "active", timeoutMs);
  return id;
}

/** The cluster's newest plan (`GET /clusters/{id}/plans` lists newest first). */
export async function latestPlan(baseUrl: string, caller: Caller, id: string): Promise<PlanBody> {
  const plans = await getOk<PlanBody[]>(baseUrl, caller, `/clusters/${id}/plans`);
  if (!plans[0]) throw new Error(`cluster ${id} has no plans`);
  return plans[0];
}

/** A plan task as `GET /clusters/{id}/plans/{planId}` shows it. */
export interface PlanTask {
  id: string;
  taskName: string;
  nodeId: string;
  service?: string;
}

export interface PlanBody {
  id: string;
  clusterId: string;
  action: string;
  currentStage: number;
  stages: PlanTask[][];
}

/** The stage index of every task, keyed `<taskName>|<service>|<nodeId>`. */
export function stageIndex(plan: PlanBody): Map<string, number> {
  const index = new Map<string, number>();
  plan.stages.forEach((stage, i) => {
    for (const task of stage) index.set(taskKey(task.taskName, task.service ?? "", task.nodeId), i);
  });
  return index;
}

export const taskKey = (taskName: string, service: string, nodeId: string) => `${taskName}|${service}|${nodeId}`;

/** Reads every message of the CORRAL_EVENTS stream on `subject` (wildcards allowed) with an ordered consumer. */
export async function readEvents<T = unknown>(nc: NatsConnection, subject: string): Promise<Array<{ subject: string; data: T }>> {
  const jsm = await jetstreamManager(nc);
  const info = await jsm.streams.info(streams.events, { subjects_filter: subject });
  const expected = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
  if (expected === 0) return [];
  const js = jetstream(nc);
  const consumer = await js.consumers.get(streams.events, {
    filter_subjects: [subject],
    deliver_policy: DeliverPolicy.All,
  });
  const out: Array<{ subject: string; data: T }> = [];
  const messages = await consumer.fetch({ max_messages: expected, expires: 2000 });
  for await (const m of messages) {
    out.push({ subject: m.subject, data: decode<T>(m.data) });
    if (out.length >= expected) break;
  }
  return out;
}

/**
 * Every node event of `tenant` on the events stream, in stream order: the elements of each `node.changes` message
 * (one per results batch) and any single `node.created` / `node.deleted` message; `subject` is the message's.
 */
export async function readNodeEvents(nc: NatsConnection, tenant: string): Promise<Array<{ subject: string; data: NodeEvent }>> {
  const messages = await readEvents<NodeEvent | NodeChanges>(nc, eventSubject(tenant, "node.*"));
  return messages.flatMap(({ subject, data }) => (data.type === "node.changes" ? data.events : [data]).map((event) => ({ subject, data: event })));
}

/**
 * Direct dependencies (requires ∪ uses) of every catalog service, by kind. A name that services provide (such as
 * `sql-database`) stands for every service providing it; `dependencyClosure` keeps those on the cluster.
 */
export type DependencyMap = Map<string, { install: string[]; runtime: string[] }>;

/** The catalog services' dependencies (plus any extra service definitions given, which replace by name). */
export function fixtureDependencies(extra: Record<string, any>[] = []): DependencyMap {
  const byName = new Map<string, any>();
  for (const s of [...rawFixtureCatalog().services, ...extra]) byName.set(s.name, s);
  const providers = new Map<string, string[]>();
  for (const s of byName.values()) {
    for (const provided of s.dependencies?.provides ?? []) {
      if (provided !== s.name) providers.set(provided, [...(providers.get(provided) ?? []), s.name]);
    }
  }
  const resolve = (names: string[]): string[] => names.flatMap((n) => providers.get(n) ?? [n]);
  const out: DependencyMap = new Map();
  for (const s of byName.values()) {
    const d = s.dependencies ?? {};
    out.set(s.name, {
      install: resolve([...(d.install?.requires ?? []), ...(d.install?.uses ?? [])]),
      runtime: resolve([...(d.runtime?.requires ?? []), ...(d.runtime?.uses ?? [])]),
    });
  }
  return out;
}

/** Every service on the cluster that `service` depends on (kind), directly or through other cluster services. */
export function dependencyClosure(deps: DependencyMap, kind: "install" | "runtime", service: string, onCluster: readonly string[]): Set<string> {
  const on = new Set(onCluster);
  const seen = new Set<string>();
  const stack = [service];
  while (stack.length > 0) {
    const s = stack.pop() as string;
    for (const d of deps.get(s)?.[kind] ?? []) {
      if (!on.has(d) || d === service || seen.has(d)) continue;
      seen.add(d);
      stack.push(d);
    }
  }
  return seen;
}

/** Per node and service, the order an action's tasks run in (node-level tasks have service ""). */
const TASK_ORDER: Record<string, string[]> = {
  CLUSTER_CREATE: ["CREATE", "CONFIRM", "BOOTSTRAP", "INSTALL", "CONFIGURE", "INITIALIZE", "START"],
  CLUSTER_DELETE: ["DELETE"],
  CLUSTER_CONFIGURE: ["BOOTSTRAP", "CONFIGURE"],
  CLUSTER_CONFIGURE_WITH_RESTART: ["BOOTSTRAP", "STOP", "CONFIGURE", "START"],
  STOP_SERVICES: ["STOP"],
  START_SERVICES: ["START"],
  RESTART_SERVICES: ["STOP", "START"],
  ADD_SERVICES: ["BOOTSTRAP", "INSTALL", "CONFIGURE", "INITIALIZE", "START"],
};

/**
 * Checks a plan against the ordering rules (docs/catalog.md, Plans) and answers every violation
 * (empty when the plan is fine):
 * - no node has two tasks in one stage;
 * - on one node, node-level tasks and each service's tasks follow the action's task order;
 * - INSTALL of a service after the INSTALL of its install dependencies (any node);
 * - START and INITIALIZE of a service after the START of its runtime dependencies (any node);
 * - STOP of a service before the STOP of its runtime dependencies (dependents are stopped first).
 */
export function planOrderViolations(plan: PlanBody, clusterServices: readonly string[], deps: DependencyMap): string[] {
  const problems: string[] = [];
  const order = TASK_ORDER[plan.action];
  if (!order) return [`unknown plan action ${plan.action}`];
  const all: Array<PlanTask & { stage: number }> = [];
  plan.stages.forEach((stage, i) => {
    const nodes = new Set<string>();
    for (const task of stage) {
      if (nodes.has(task.nodeId)) problems.push(`stage ${i}: node ${task.nodeId} has two tasks`);
      nodes.add(task.nodeId);
      all.push({ ...task, stage: i });
    }
  });
  const rank = (name: string) => order.indexOf(name);
  for (const a of all) {
    if (rank(a.taskName) < 0) problems.push(`${plan.action} has an unexpected ${a.taskName} task (${a.id})`);
  }
  const show = (t: PlanTask & { stage: number }) => `${t.taskName} ${t.service ?? ""} on ${t.nodeId} (stage ${t.stage})`;
  const mustPrecede = (a: PlanTask & { stage: number }, b: PlanTask & { stage: number }, why: string) => {
    if (!(a.stage < b.stage)) problems.push(`${show(a)} must run before ${show(b)}: ${why}`);
  };
  for (const a of all) {
    for (const b of all) {
      if (a === b) continue;
      const sa = a.service ?? "";
      const sb = b.service ?? "";
      if (a.nodeId === b.nodeId && (sa === sb || sa === "") && rank(a.taskName) < rank(b.taskName)) {
        mustPrecede(a, b, "task order on a node");
      }
      if (sa === "" || sb === "") continue;
      if (a.taskName === "INSTALL" && b.taskName === "INSTALL" && dependencyClosure(deps, "install", sb, clusterServices).has(sa)) {
        mustPrecede(a, b, `${sb} install-depends on ${sa}`);
      }
      if (a.taskName === "START" && (b.taskName === "START" || b.taskName === "INITIALIZE") && dependencyClosure(deps, "runtime", sb, clusterServices).has(sa)) {
        mustPrecede(a, b, `${sb} runtime-depends on ${sa}`);
      }
      if (a.taskName === "STOP" && b.taskName === "STOP" && dependencyClosure(deps, "runtime", sa, clusterServices).has(sb)) {
        mustPrecede(a, b, `${sa} runtime-depends on ${sb}, so it is stopped first`);
      }
    }
  }
  return problems;
}

/** GET that must answer 200; returns the body (throws with the response otherwise). */
export async function getOk<B = any>(baseUrl: string, caller: Caller, path: string): Promise<B> {
  const res = await api(baseUrl, "GET", path, caller);
  if (res.status !== 200) throw new Error(`GET ${path}: ${show(res)}`);
  return res.body as B;
}

/** A tenant with workers (3 unless told) whose catalog is the test catalog on `sim` and `shell`. */
export async function tenantWithSimCatalog(
  sys: { baseUrl: string; nc: NatsConnection },
  prefix: string,
  options: { workers?: number; catalog?: SimCatalogOptions; tenant?: Record<string, unknown> } = {},
): Promise<E2eTenant> {
  const created = await createWorkerTenant(sys.baseUrl, sys.nc, prefix, { workers: options.workers ?? 3, ...options.tenant });
  await importSimCatalog(sys.baseUrl, created.admin, options.catalog ?? {});
  return created;
}
