/**
 * The clusters service's core (stores, actors, effects, operations, reconciler) on a real nats-server, with a solver
 * service to lay out and plan, without its request handlers, results consumer, gateway, tenancy service or
 * provisioners: tests drive the actors with events themselves and read what was stored and published.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  decode,
  streams,
  taskSubject,
  type CatalogSnapshot,
  type Identity,
  type PluginField,
  type PluginSpec,
  type TaskMessage,
  type Tenant,
} from "@corral/contracts";
import { silentLogger } from "@corral/shared";
import { startSolverService } from "@corral/solver/service";
import { createActors, type Actors } from "../../src/actor/index.js";
import type { AfterWriteHook } from "../../src/actor/durable-actor.js";
import type { TenancyClient } from "../../src/adapters/tenancy-client.js";
import { openEngineDeps, type EngineDeps } from "../../src/adapters/deps.js";
import { createReconciler } from "../../src/engine/reconciler.js";
import { createClusterOperations, type ClusterOperations, type OperationContext } from "../../src/operations/index.js";

/** Lease of the test template: 1 h at first, extended by at most 10 min at a time, to at most 1 day. */
export const LEASE = { initial: 3_600_000, max: 86_400_000, step: 600_000 };

/** The admin's `endpoint` of the test catalog's provider `sim1`. */
export const ADMIN_ENDPOINT = "https://api.admin.example";

/** A catalog with provider `sim1` (of {@link TEST_SIM_SPEC}), service `base` (shell actions) and template `t1` using both. */
export function testCatalog(): CatalogSnapshot {
  const shell = (script: string) => ({ type: "shell", fields: { script } });
  return {
    providers: [{ name: "sim1", providertype: "sim", provisioner: { endpoint: ADMIN_ENDPOINT, region: "admin-region" } }],
    hardwaretypes: [{ name: "small", providermap: { sim1: { flavor: "s1" } } }],
    imagetypes: [{ name: "img", providermap: { sim1: { image: "i1" } } }],
    services: [
      {
        name: "base",
        dependencies: { provides: [], conflicts: [], install: { requires: [], uses: [] }, runtime: { requires: [], uses: [] } },
        provisioner: { actions: { install: shell("true"), start: shell("true"), stop: shell("true"), configure: shell("true") } },
      },
    ],
    clustertemplates: [
      {
        name: "t1",
        compatibility: { services: ["base"], hardwaretypes: ["small"], imagetypes: ["img"] },
        defaults: { services: ["base"], provider: "sim1", hardwaretype: "small", imagetype: "img", config: {} },
        administration: { leaseduration: LEASE },
      },
    ],
  };
}

const textField = (label: string, override: boolean): PluginField => ({ label, type: "text", override });

/**
 * The specification of the test catalog's provider type `sim`, as far as provider fields go: a user may give
 * `token` (a user field) and `region` (an admin field marked override), not `endpoint` (an admin field).
 */
export const TEST_SIM_SPEC: PluginSpec = {
  name: "sim",
  parameters: {
    admin: { fields: { region: textField("Region", true), endpoint: textField("Endpoint", false) }, required: [] },
    user: { fields: { token: { label: "Token", type: "password", override: false, sensitive: true } }, required: [] },
  },
};

/** What tenancy answers about one tenant and its catalog (the tenancy service is not part of this core). */
export function tenancyOf(tenant: Tenant, catalog: CatalogSnapshot): TenancyClient {
  return {
    tenant: async (name) => (name === tenant.name ? { tenant, uid: `uid-${tenant.name}` } : undefined),
    catalog: async () => catalog,
    providerType: async (name) => (name === TEST_SIM_SPEC.name ? TEST_SIM_SPEC : undefined),
  };
}

export interface CoreOptions {
  tenant: Tenant;
  afterWrite?: AfterWriteHook;
  /** The clock of the core. @default Date.now */
  now?: () => number;
  /** @default 0: the reconciler republishes whatever is unconfirmed */
  republishAfterMs?: number;
}

export interface Core {
  deps: EngineDeps;
  actors: Actors;
  ctx: OperationContext;
  operations: ClusterOperations;
  reconciler: ReturnType<typeof createReconciler>;
  /** The tenant's admin. */
  admin: Identity;
  stop(): void;
}

export async function startCore(nc: NatsConnection, options: CoreOptions): Promise<Core> {
  const deps = await openEngineDeps(nc, {
    log: silentLogger,
    tenancy: tenancyOf(options.tenant, testCatalog()),
    ...(options.now ? { now: options.now } : {}),
  });
  const solver = await startSolverService({ nc, log: silentLogger });
  const actors = createActors(deps, options.afterWrite ? { afterWrite: options.afterWrite } : {});
  const ctx = { deps, actors };
  return {
    deps,
    actors,
    ctx,
    operations: createClusterOperations(ctx),
    reconciler: createReconciler(ctx, { republishAfterMs: options.republishAfterMs ?? 0 }),
    admin: { tenant: options.tenant.name, userId: "admin", role: "admin" },
    stop: () => {
      deps.clusters.stop();
      void solver.stop();
    },
  };
}

/** One task dispatch as stored on the task stream. */
export interface PublishedTask {
  taskId: string;
  dispatch: number;
  taskName: string;
  republished: boolean;
}

/** Every task message stored on the task stream for `tenant`, in order (duplicates were dropped by their id). */
export async function storedTaskMessages(nc: NatsConnection, tenant: string): Promise<TaskMessage[]> {
  const jsm = await jetstreamManager(nc);
  const { state } = await jsm.streams.info(streams.tasks);
  const out: TaskMessage[] = [];
  for (let seq = state.first_seq; seq <= state.last_seq && state.messages > 0; seq++) {
    const m = await jsm.streams.getMessage(streams.tasks, { seq }).catch(() => undefined);
    if (m && m.subject === taskSubject(tenant)) out.push(decode<TaskMessage>(m.data));
  }
  return out;
}

/** What {@link storedTaskMessages} says about each task's dispatch. */
export async function storedTasks(nc: NatsConnection, tenant: string): Promise<PublishedTask[]> {
  return (await storedTaskMessages(nc, tenant)).map((t) => ({
    taskId: t.taskId,
    dispatch: t.dispatch,
    taskName: t.taskName,
    republished: t.republished === true,
  }));
}
