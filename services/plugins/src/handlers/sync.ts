import { randomUUID } from "node:crypto";
import {
  BadRequestError,
  SUPERADMIN_TENANT,
  type CopyTenantResult,
  type PluginSpec,
  type PurgeResult,
} from "@corral/contracts";
import type { EndpointHandlers, Logger, PluginTypeReader as PluginTypeStore } from "@corral/shared";
import { buildActiveSet, type ActiveSet } from "../domain/active-set.js";
import { PLUGIN_KINDS, type PluginKind, type ResourceAddress, type ResourceRecord, type StoredVersion } from "../domain/resource-record.js";
import { transition } from "../domain/version-status.js";
import type { ActiveSetStore } from "../adapters/active-set-store.js";
import type { BlobStore } from "../adapters/blob-store.js";
import { objectNameFor, type ResourceStore } from "../adapters/resource-store.js";

export interface SyncHandlerDeps {
  types: PluginTypeStore;
  resources: ResourceStore;
  blobs: BlobStore;
  activeSets: ActiveSetStore;
  log: Logger;
  now: () => number;
}

const addressKey = (a: ResourceAddress) => [a.kind, a.plugin, a.resourceType, a.resource].join("\u0000");

/** `POST /plugins/sync` and the internal tenant copy of bootstrap. */
export function syncHandlers(deps: SyncHandlerDeps) {
  const { types, resources, blobs, activeSets, log } = deps;

  /** Publishes the tenant's live versions for provisioners (built from fresh metadata on every CAS attempt). */
  const publish = async (tenant: string): Promise<ActiveSet> => {
    const specs = new Map<string, PluginSpec>();
    for (const kind of PLUGIN_KINDS) for (const spec of await types.list(kind)) specs.set(`${kind}\u0000${spec.name}`, spec);
    const specOf = (kind: PluginKind, plugin: string) => specs.get(`${kind}\u0000${plugin}`);
    return activeSets.publish(tenant, async (generation) =>
      buildActiveSet(tenant, await resources.listTenant(tenant), specOf, generation, deps.now()),
    );
  };

  /** Removes a resource's metadata and then its bytes (a crash in between leaves only unreachable bytes). */
  const removeResource = async (address: ResourceAddress): Promise<boolean> => {
    const found = await resources.get(address);
    if (!found || !(await resources.remove(address, found.revision))) return false;
    for (const v of found.value.versions) await blobs.delete(v.object);
    return true;
  };

  const purgeTenant = async (tenant: string): Promise<PurgeResult> => {
    let removed = 0;
    for (const { address } of await resources.listTenant(tenant)) if (await removeResource(address)) removed++;
    if (removed > 0) {
      await publish(tenant);
      log.info("plugin resources of a deleted tenant removed", { tenant, removed });
    }
    return { removed };
  };

  return {
    "plugins.sync": async (req) => {
      const tenant = req.identity.tenant;
      for (const { address, record } of await resources.listTenant(tenant)) {
        if (!record.versions.some((v) => v.status === "staged" || v.status === "recalled")) continue;
        await resources.modify(address, (current) => {
          if (!current) return { keep: true };
          const next = transition(current.value.versions, { type: "resource.sync" });
          return next.ok && next.changed ? { put: { ...current.value, versions: next.versions } } : { keep: true };
        });
      }
      const set = await publish(tenant);
      log.info("plugin resources synced", { tenant, generation: set.generation });
    },

    /**
     * Makes `to`'s plugin resources an exact copy of `from`'s: same names, version numbers, statuses and counters,
     * bytes copied to new objects. Idempotent: a version already copied (same number and size) is kept, resources
     * `from` does not have are removed, so a retry after a failure finishes the job.
     */
    "plugins.copyTenant": async ({ from, to }) => {
      if (from === to) throw new BadRequestError("from and to must be different tenants");
      const source = await resources.listTenant(from);
      const target = new Map((await resources.listTenant(to)).map((e) => [addressKey(e.address), e]));
      const result: CopyTenantResult = { resources: 0, versions: 0, copied: 0 };
      for (const { address, record } of source) {
        const targetAddress = { ...address, tenant: to };
        const existing = target.get(addressKey(targetAddress))?.record;
        target.delete(addressKey(targetAddress));
        const versions: StoredVersion[] = [];
        for (const v of record.versions) {
          const same = existing?.versions.find((t) => t.version === v.version && t.size === v.size && t.format === v.format);
          if (same) {
            versions.push({ ...v, object: same.object });
            continue;
          }
          const object = objectNameFor(targetAddress, randomUUID());
          await blobs.copy(v.object, object);
          versions.push({ ...v, object });
          result.copied++;
        }
        const copy: ResourceRecord = { nextVersion: record.nextVersion, versions };
        let replaced: StoredVersion[] = [];
        await resources.modify(targetAddress, (current) => {
          const kept = new Set(versions.map((v) => v.object));
          replaced = (current?.value.versions ?? []).filter((v) => !kept.has(v.object));
          return { put: { ...copy, nextVersion: Math.max(copy.nextVersion, current?.value.nextVersion ?? 1) } };
        });
        for (const v of replaced) await blobs.delete(v.object);
        result.resources++;
        result.versions += versions.length;
      }
      // Whatever `to` held that `from` does not (a deleted tenant's leftovers) goes.
      for (const { address } of target.values()) await removeResource(address);
      const set = await publish(to);
      log.info("plugin resources copied", { from, to, ...result, generation: set.generation });
      return result;
    },

    /**
     * Removes every plugin resource of a tenant (metadata and bytes) and, when there were any, publishes its
     * now empty live set, so provisioners drop what they synced. Tenancy calls it when a tenant is deleted and before a name is created
     * again. Idempotent.
     */
    "plugins.purgeTenant": async ({ tenant }) => {
      if (tenant === SUPERADMIN_TENANT) throw new BadRequestError("the superadmin tenant's resources are never purged");
      return purgeTenant(tenant);
    },
  } satisfies EndpointHandlers<"plugins">;
}
