/**
 * The chaos workload: each cluster goes through create, configure, add services, stop, start and delete over REST,
 * one operation after the other once the previous settled, several clusters at once, until every cluster is done
 * or the deadline passes. A call without an answer (gateway dead, paused, 5xx) is retried on the next gateway, but
 * only after stored state shows it was not carried out (no new plan, no cluster of that name), so no operation is
 * sent twice.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Caller } from "../api.js";
import { call, gatewayRotation, type Outcome } from "./rest.js";

export const OPERATIONS = ["create", "configure", "add-services", "stop", "start", "delete"] as const;
export type Operation = (typeof OPERATIONS)[number];

export interface ClusterSpec {
  name: string;
  template: string;
  numMachines: number;
  /** A service of the template's compatibility list that is not on the cluster yet. */
  addService: string;
}

export interface OperationRecord {
  op: Operation;
  /** ms: when the call was accepted, when the cluster settled after it. */
  acceptedAt: number;
  settledAt?: number;
  settledAs?: string;
}

export interface ClusterRun {
  spec: ClusterSpec;
  id?: string;
  operations: OperationRecord[];
  /** Why the sequence stopped early (a refused call, a wrong final status, no settling in time). */
  failure?: string;
}

export interface WorkloadOptions {
  baseUrls: readonly string[];
  caller: Caller;
  clusters: readonly ClusterSpec[];
  /** Clusters in flight at once. */
  concurrency: number;
  /** ms timestamp after which no new operation starts. */
  deadline: number;
  /** How long one operation may take to settle. @default 120000 */
  settleTimeoutMs?: number;
}

export interface WorkloadReport {
  runs: ClusterRun[];
  /** Operations that settled as they should. */
  operationsCompleted: number;
  /** Calls that got no answer and were looked up, then retried or found carried out. */
  unansweredCalls: number;
  elapsedMs: number;
}

/** The status an operation leaves a cluster in. */
export const settlesAs = (op: Operation) => (op === "delete" ? "terminated" : "active");

export async function runWorkload(options: WorkloadOptions): Promise<WorkloadReport> {
  const next = gatewayRotation(options.baseUrls);
  const started = Date.now();
  let unansweredCalls = 0;
  const settleTimeoutMs = options.settleTimeoutMs ?? 120_000;

  /** Repeats a read until some gateway answers it. */
  const read = async <T>(path: string): Promise<Outcome<T> & { answered: true }> => {
    for (let i = 0; ; i++) {
      const r = await call<T>(next(), options.caller, "GET", path, undefined, 5_000);
      if (r.answered) return r;
      if (Date.now() > options.deadline + settleTimeoutMs) throw new Error(`GET ${path}: no answer (${r.why})`);
      await sleep(Math.min(1_000, 100 * (i + 1)));
    }
  };
  /** The cluster's plans, newest first. */
  const plans = async (id: string) => {
    const r = await read<Array<{ status: string }>>(`/clusters/${id}/plans`);
    if (r.status !== 200 || !Array.isArray(r.body)) throw new Error(`GET plans of ${id}: HTTP ${r.status} ${r.text}`);
    return r.body;
  };
  const planCount = async (id: string) => (await plans(id)).length;
  /** Where a cluster's newest plan stands, for the message of a cluster that does not settle. */
  const whereStuck = async (id: string): Promise<string> => {
    const newest = (await plans(id).catch(() => []))[0] as { id?: string; status?: string; currentStage?: number; stages?: unknown[][] } | undefined;
    if (!newest) return "; no plan";
    const stages = newest.stages ?? [];
    return `; newest plan ${newest.id} ${newest.status} at stage ${newest.currentStage} of ${stages.length} (${stages[newest.currentStage ?? 0]?.length ?? 0} tasks in it)`;
  };
  const findByName = async (name: string): Promise<string | undefined> => {
    const r = await read<Array<{ id: string; name: string }>>("/clusters");
    if (r.status !== 200 || !Array.isArray(r.body)) throw new Error(`GET /clusters: HTTP ${r.status} ${r.text}`);
    return r.body.find((c) => c.name === name)?.id;
  };

  /** Sends one call until it is answered or stored state shows it was carried out; the answer's body or undefined. */
  const submit = async (method: string, path: string, body: unknown, carriedOut: () => Promise<string | undefined>): Promise<string | undefined> => {
    let unanswered = 0;
    for (;;) {
      const r = await call<{ id?: string }>(next(), options.caller, method, path, body);
      if (r.answered && r.status === 409 && r.text.includes("cluster_busy")) {
        // Still busy with the previous operation as another instance sees it: that one's answer says try again.
        await sleep(1_000);
        continue;
      }
      if (r.answered) {
        if (r.status === 200) return r.body?.id;
        // Refused after an unanswered try: that try may have been carried out after all (a delete, then "terminated").
        const done = unanswered > 0 ? await carriedOut() : undefined;
        if (done !== undefined) return done;
        throw new Error(`${method} ${path}: HTTP ${r.status} ${r.text}`);
      }
      unanswered++;
      unansweredCalls++;
      // The call may still be on its way through a service: give it a moment before looking.
      await sleep(2_000);
      const done = await carriedOut();
      if (done !== undefined) return done;
      if (Date.now() > options.deadline + settleTimeoutMs) throw new Error(`${method} ${path}: no answer (${r.why})`);
    }
  };

  /** Waits until the operation's plan (the `count`th) has ended and the cluster is no longer pending. */
  const settle = async (id: string, count: number, op: Operation): Promise<string> => {
    const until = Date.now() + settleTimeoutMs;
    for (;;) {
      const status = await read<{ status?: string }>(`/clusters/${id}/status`);
      const s = status.body?.status;
      const settled = status.status === 200 && s !== undefined && s !== "pending";
      const newest = settled ? await plans(id) : [];
      if (settled && newest.length >= count && (newest[0]?.status === "succeeded" || newest[0]?.status === "failed")) return s;
      if (Date.now() > until) {
        throw new Error(`cluster ${id} did not settle within ${settleTimeoutMs} ms after ${op} (status ${s ?? status.text}${await whereStuck(id)})`);
      }
      await sleep(500);
    }
  };

  const runOne = async (spec: ClusterSpec): Promise<ClusterRun> => {
    const run: ClusterRun = { spec, operations: [] };
    try {
      for (const op of OPERATIONS) {
        if (Date.now() > options.deadline) break;
        const id = run.id;
        const plansBefore = id === undefined ? 0 : await planCount(id);
        const accepted = await (async () => {
          if (op === "create" || id === undefined) {
            const body = { name: spec.name, clusterTemplate: spec.template, numMachines: spec.numMachines };
            return submit("POST", "/clusters", body, () => findByName(spec.name));
          }
          const newPlan = async () => ((await planCount(id)) > plansBefore ? id : undefined);
          const [method, path, body]: [string, string, unknown] =
            op === "configure"
              ? ["PUT", `/clusters/${id}/config`, { config: { chaos: { round: 1 } }, restart: true }]
              : op === "add-services"
                ? ["POST", `/clusters/${id}/services`, { services: [spec.addService] }]
                : op === "delete"
                  ? ["DELETE", `/clusters/${id}`, undefined]
                  : ["POST", `/clusters/${id}/services/${op}`, undefined];
          await submit(method, path, body, newPlan);
          return id;
        })();
        if (accepted === undefined) throw new Error(`${op}: accepted without a cluster id`);
        run.id = accepted;
        const record: OperationRecord = { op, acceptedAt: Date.now() };
        run.operations.push(record);
        record.settledAs = await settle(accepted, plansBefore + 1, op);
        record.settledAt = Date.now();
        if (record.settledAs !== settlesAs(op)) throw new Error(`${op} of ${accepted} settled as ${record.settledAs}`);
      }
    } catch (err) {
      run.failure = err instanceof Error ? err.message : String(err);
    }
    return run;
  };

  const runs: ClusterRun[] = [];
  let nextSpec = 0;
  await Promise.all(
    Array.from({ length: Math.min(options.concurrency, options.clusters.length) }, async () => {
      while (nextSpec < options.clusters.length && Date.now() <= options.deadline) {
        const spec = options.clusters[nextSpec++];
        if (spec) runs.push(await runOne(spec));
      }
    }),
  );
  const operationsCompleted = runs.reduce((n, r) => n + r.operations.filter((o) => o.settledAs === settlesAs(o.op)).length, 0);
  return { runs, operationsCompleted, unansweredCalls, elapsedMs: Date.now() - started };
}

/** The status a cluster should end in: that of the last operation it accepted. */
export function expectedStatus(run: ClusterRun): string | undefined {
  const last = run.operations[run.operations.length - 1];
  return last ? settlesAs(last.op) : undefined;
}
