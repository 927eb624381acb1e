import type { NatsConnection } from "@nats-io/transport-node";
import { decode, healthReportFilter, healthReportTenantOf, queues, type NodeHealthReport } from "@corral/contracts";
import type { Logger } from "@corral/shared";

/** The node health reports provisioners publish, as this service's instances share them. */
export interface HealthReportFeed {
  /** Stops taking reports and waits for the one being handled. */
  stop(): Promise<void>;
}

/**
 * Hands every health report (`corral.health.reports.<tenant>`, core NATS, queue group of the clusters service) to
 * `handle`, one after the other, with the tenant its subject names (a report naming another is dropped). A report
 * that cannot be read is dropped; so is one arriving while too many wait (a later full report makes it good).
 */
export function followHealthReports(nc: NatsConnection, log: Logger, handle: (tenant: string, report: NodeHealthReport) => Promise<void>): HealthReportFeed {
  const MAX_WAITING = 1_000;
  let waiting = 0;
  let turn: Promise<void> = Promise.resolve();
  const sub = nc.subscribe(healthReportFilter, {
    queue: queues.clusters,
    callback: (err, msg) => {
      if (err) return log.warn("health reports: subscription failed", { err });
      const tenant = healthReportTenantOf(msg.subject);
      let report: NodeHealthReport;
      try {
        report = decode<NodeHealthReport>(msg.data);
      } catch {
        return log.warn("health reports: an unreadable report is dropped", { subject: msg.subject });
      }
      if (tenant === undefined || report?.tenant !== tenant || !Array.isArray(report.nodes)) {
        return log.warn("health reports: a report not of its subject's tenant is dropped", { subject: msg.subject });
      }
      if (waiting >= MAX_WAITING) return log.warn("health reports: too many waiting; one is dropped", { tenant });
      waiting++;
      turn = turn
        .then(() => handle(tenant, report))
        .catch((err: unknown) => log.warn("health reports: applying a report failed", { tenant, err }))
        .finally(() => waiting--);
    },
  });
  return {
    async stop() {
      sub.unsubscribe();
      await turn;
    },
  };
}
