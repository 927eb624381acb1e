import { randomUUID } from "node:crypto";
import { BadRequestError, ConflictError, NotFoundError } from "@corral/contracts";
import type { EndpointHandlers, Logger, PluginTypeReader as PluginTypeStore } from "@corral/shared";
import {
  metadataOf,
  withNewVersion,
  withoutVersions,
  type ResourceAddress,
  type ResourceMeta,
  type StoredVersion,
} from "../domain/resource-record.js";
import { transition, type ResourceStatus, type VersionEvent } from "../domain/version-status.js";
import { createArchiveInspector } from "../adapters/archive-inspector.js";
import type { BlobStore } from "../adapters/blob-store.js";
import { objectNameFor, type ResourceStore } from "../adapters/resource-store.js";
import { resolveResource, resolveType, type ResourcePath } from "./request.js";

export interface ResourceHandlerDeps {
  types: PluginTypeStore;
  resources: ResourceStore;
  blobs: BlobStore;
  log: Logger;
  now: () => number;
}

const describe = (a: ResourceAddress) => `${a.kind}/${a.plugin}/${a.resourceType}/${a.resource}`;

/** Upload, list, delete, stage and recall of plugin resource versions. */
export function resourceHandlers(deps: ResourceHandlerDeps) {
  const { types, resources, blobs, log } = deps;

  /** Deletes objects whose versions are gone from the metadata; a failure only leaks bytes, so it is logged. */
  const deleteObjects = async (versions: readonly StoredVersion[]) => {
    for (const v of versions) {
      await blobs.delete(v.object).catch((err: unknown) => log.warn("could not delete a resource object", { object: v.object, err }));
    }
  };

  /** Stage or recall one version by the version status table; "no effect" rows answer 200 too (docs/decisions.md). */
  const changeStatus = async (
    req: ResourcePath & { params: { version: number } },
    type: "version.stage" | "version.recall",
  ): Promise<void> => {
    const { address } = await resolveResource(types, req);
    const { version } = req.params;
    const event: VersionEvent = { type, version };
    await resources.modify(address, (current) => {
      if (!current || current.value.versions.length === 0) throw new NotFoundError("resource", describe(address));
      const next = transition(current.value.versions, event);
      if (!next.ok) throw new NotFoundError(`version of ${describe(address)}`, String(version));
      return next.changed ? { put: { ...current.value, versions: next.versions } } : { keep: true };
    });
  };

  return {
    "plugins.upload": async (req) => {
      const upload = req.upload;
      if (!upload) throw new BadRequestError("the request carries no resource bytes");
      try {
        const { address, format } = await resolveResource(types, req);
        const object = objectNameFor(address, randomUUID());
        const inspect = format === "archive" ? createArchiveInspector(address.resource) : undefined;
        const { size } = await blobs.takeUpload(upload.object, object, inspect);
        const uploadedAt = deps.now();
        let version = 0;
        try {
          // The commit point: until the version is in the metadata, the object is only an orphan.
          await resources.modify(address, (current) => {
            const added = withNewVersion(current?.value, { object, size, format, uploadedAt });
            version = added.version;
            return { put: added.record };
          });
        } catch (err) {
          await blobs.delete(object);
          throw err;
        }
        log.info("resource uploaded", { tenant: address.tenant, resource: describe(address), version, size });
        const meta: ResourceMeta = { name: address.resource, version, status: "inactive" };
        return meta;
      } finally {
        await blobs.discardUpload(upload.object);
      }
    },

    "plugins.listResources": async (req) => {
      const { tenant, kind, plugin, resourceType } = await resolveType(types, req);
      const { status } = req.query;
      const found = await resources.listType(tenant, kind, plugin, resourceType);
      const out: Record<string, ResourceMeta[]> = {};
      for (const name of [...found.keys()].sort()) {
        const record = found.get(name);
        const meta = record ? metadataOf(name, record, status) : [];
        if (meta.length > 0) out[name] = meta;
      }
      return out;
    },

    "plugins.listVersions": async (req) => {
      const { address } = await resolveResource(types, req);
      const { status } = req.query;
      const found = await resources.get(address);
      if (!found || found.value.versions.length === 0) throw new NotFoundError("resource", describe(address));
      return metadataOf(address.resource, found.value, status);
    },

    "plugins.deleteResource": async (req) => {
      const { address } = await resolveResource(types, req);
      await deleteVersions(address, "all");
    },

    "plugins.deleteVersion": async (req) => {
      const { address } = await resolveResource(types, req);
      await deleteVersions(address, req.params.version);
    },

    "plugins.stage": (req) => changeStatus(req, "version.stage"),
    "plugins.recall": (req) => changeStatus(req, "version.recall"),
  } satisfies EndpointHandlers<"plugins">;

  async function deleteVersions(address: ResourceAddress, which: number | "all"): Promise<void> {
    let removed: StoredVersion[] = [];
    await resources.modify(address, (current) => {
      if (!current) throw new NotFoundError("resource", describe(address));
      const result = withoutVersions(current.value, which);
      if (!result.ok) {
        if (result.reason === "not_inactive") {
          throw new ConflictError(
            `only inactive versions can be deleted; ${describe(address)} has ${result.versions
              .map((v) => `version ${v.version} ${v.status}`)
              .join(", ")}`,
            { versions: result.versions satisfies Array<{ version: number; status: ResourceStatus }> },
            "not_inactive",
          );
        }
        if (result.reason === "no_versions") throw new NotFoundError("resource", describe(address));
        throw new NotFoundError(`version of ${describe(address)}`, String(which));
      }
      removed = result.removed;
      return { put: result.record };
    });
    await deleteObjects(removed);
  }
}

