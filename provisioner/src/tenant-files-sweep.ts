import { lstat, readdir } from "node:fs/promises";
import { join } from "node:path";
import { silentLogger, type ActiveSetReader, type ClusterRecordReader, type Logger } from "@corral/shared";
import { orphanReason } from "./cluster-records.js";
import { nameOfSegment, pathSegment } from "./paths.js";
import { activeResourceCount } from "./resource-sync.js";
import type { LocalSandbox } from "./sandbox/index.js";
import { removeBelow } from "./sandbox/removal.js";

export interface TenantFilesSweepDeps {
  workDir: string;
  log: Logger;
  sandbox: LocalSandbox;
  clusters: () => Promise<ClusterRecordReader>;
  activeSets: () => Promise<ActiveSetReader>;
  /**
   * Whether the tenant's files must stay whatever else holds: it has workers on some provisioner, or a worker
   * loop or a resource install of it still runs here.
   */
  isBusy: (tenant: string) => boolean;
}

export interface TenantFilesSweepReport {
  /** `<tenant>/<clusterId>` of the cluster directories removed. */
  clusters: string[];
  /** Tenants whose everything was removed (`LocalSandbox.removeTenants`). */
  tenants: string[];
}

/**
 * One pass over the tenant directories of the work directory, removing what a deleted tenant left on this host,
 * whether this provisioner ran during the deletion or not. The provisioner may not read the tenants bucket; what
 * it can see of a deletion is what the deletion requires and purges: no workers anywhere, no cluster record (the
 * clusters service purges them; cluster ids are never reused), an empty active resource set (the plugins service
 * purges it). So, for every tenant not busy (`isBusy`):
 *
 * 1. each `nodes/<clusterId>` whose cluster is not stored, is another tenant's or is terminated goes;
 * 2. with no cluster directory left and no active resources, the whole tenant goes (`LocalSandbox.removeTenants`,
 *    once for all of them).
 *
 * A live tenant that matches (no workers, no clusters, no resources) loses nothing it needs: its directory and
 * uid are made again by its next action. A failure to read a bucket leaves that tenant for the next pass.
 */
export async function sweepTenantFiles(deps: TenantFilesSweepDeps): Promise<TenantFilesSweepReport> {
  const report: TenantFilesSweepReport = { clusters: [], tenants: [] };
  const segments = await directories(deps.workDir);
  if (segments.length === 0) return report;
  const [clusters, activeSets] = await Promise.all([deps.clusters(), deps.activeSets()]);
  const gone: string[] = [];
  for (const segment of segments) {
    const tenant = nameOfSegment(segment);
    if (segment.startsWith(".") || pathSegment(tenant) !== segment || deps.isBusy(tenant)) continue;
    try {
      const clustersLeft = await removeLeftoverClusters(deps, clusters, tenant, report);
      if (clustersLeft === 0 && activeResourceCount(await activeSets.get(tenant), silentLogger) === 0) gone.push(tenant);
    } catch (err) {
      deps.log.warn("could not sweep a tenant's files; trying again later", { tenant, err });
    }
  }
  const removable = gone.filter((tenant) => !deps.isBusy(tenant));
  if (removable.length > 0) {
    await deps.sandbox.removeTenants(deps.workDir, removable);
    report.tenants.push(...removable);
  }
  return report;
}

/** Step 1 for one tenant; answers how many cluster directories (of live clusters, or unknown names) are left. */
async function removeLeftoverClusters(deps: TenantFilesSweepDeps, clusters: ClusterRecordReader, tenant: string, report: TenantFilesSweepReport): Promise<number> {
  const tenantSegment = pathSegment(tenant);
  let left = 0;
  for (const segment of await directories(join(deps.workDir, tenantSegment, "nodes"))) {
    const clusterId = nameOfSegment(segment);
    const why = pathSegment(clusterId) === segment ? orphanReason(await clusters.get(clusterId), tenant) : undefined;
    if (!why) {
      left++;
      continue;
    }
    await removeBelow(deps.workDir, [tenantSegment, "nodes", segment]);
    report.clusters.push(`${tenant}/${clusterId}`);
    deps.log.info("removed the node directories of a cluster that is gone", { tenant, clusterId, why });
  }
  return left;
}

/** Names of the real directories (links excluded) in `dir`; none when it does not exist. */
async function directories(dir: string): Promise<string[]> {
  const s = await lstat(dir).catch(() => undefined);
  if (!s?.isDirectory()) return [];
  const out: string[] = [];
  for (const entry of await readdir(dir, { withFileTypes: true })) if (entry.isDirectory()) out.push(entry.name);
  return out;
}

export interface TenantFilesSweepsOptions extends TenantFilesSweepDeps {
  /** Also sweep this often, ms. */
  intervalMs: number;
  /** Runs a sweep in turn with whatever starts or stops a tenant's work (the provisioner's assignment chain). */
  inTurn: (sweep: () => Promise<void>) => Promise<void>;
}

/** Sweeps now, every `intervalMs` and on `request`; requests made while one waits its turn share it. */
export interface TenantFilesSweeps {
  request(): void;
  stop(): Promise<void>;
}

export function startTenantFilesSweeps(options: TenantFilesSweepsOptions): TenantFilesSweeps {
  const { log } = options;
  let waiting = false;
  let stopped = false;
  let last: Promise<void> = Promise.resolve();
  const request = () => {
    if (waiting || stopped) return;
    waiting = true;
    last = options.inTurn(async () => {
      waiting = false;
      if (stopped) return;
      try {
        const report = await sweepTenantFiles(options);
        if (report.tenants.length > 0) log.info("removed the files of tenants that are gone", { tenants: report.tenants });
      } catch (err) {
        log.warn("sweeping the files of tenants that are gone failed; trying again later", { err });
      }
    });
  };
  const timer = setInterval(request, options.intervalMs);
  timer.unref();
  request();
  return {
    request,
    async stop() {
      stopped = true;
      clearInterval(timer);
      await last;
    },
  };
}
