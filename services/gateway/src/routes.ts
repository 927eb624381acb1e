import { CATALOG_KINDS, subjects } from "@corral/shared";

/** Who may call a route. `public` needs no identity. */
export type Access = "public" | "user" | "admin" | "superadmin";
export type Method = "GET" | "POST" | "PUT" | "DELETE";
/**
 * `json`: a JSON body is required; `optional`: JSON if present; `none`: any body is ignored; `upload`: raw bytes,
 * streamed into the uploads object store (never held whole in memory) and handed over by name.
 */
export type BodyKind = "json" | "optional" | "none" | "upload";

export interface Route {
  method: Method;
  /** Path under the version segment; `:name` segments become params. */
  pattern: string;
  /** NATS subject of the owning service; `undefined` for routes the gateway answers itself. */
  subject?: string;
  access: Access;
  /** Status when the role does not allow the call (spec: 401, except import and metrics: 403). @default 401 */
  denialStatus?: 401 | 403;
  body: BodyKind;
}

const catalogRoutes = (): Route[] =>
  CATALOG_KINDS.flatMap((kind) => {
    const s = subjects.tenancy.catalog[kind];
    return [
      { method: "GET", pattern: `/${kind}`, subject: s.list, access: "user", body: "none" },
      { method: "POST", pattern: `/${kind}`, subject: s.create, access: "admin", body: "json" },
      { method: "GET", pattern: `/${kind}/:name`, subject: s.get, access: "user", body: "none" },
      { method: "PUT", pattern: `/${kind}/:name`, subject: s.update, access: "admin", body: "json" },
      { method: "DELETE", pattern: `/${kind}/:name`, subject: s.delete, access: "admin", body: "none" },
    ] satisfies Route[];
  });

const clusterRoutes = (): Route[] => {
  const c = subjects.clusters;
  const serviceOps = (["start", "stop", "restart"] as const).flatMap((op): Route[] => {
    const subject = { start: c.startServices, stop: c.stopServices, restart: c.restartServices }[op];
    return [
      { method: "POST", pattern: `/clusters/:id/services/${op}`, subject, access: "user", body: "optional" },
      { method: "POST", pattern: `/clusters/:id/services/:service/${op}`, subject, access: "user", body: "optional" },
    ];
  });
  return [
    { method: "GET", pattern: "/clusters", subject: c.list, access: "user", body: "none" },
    { method: "POST", pattern: "/clusters", subject: c.create, access: "user", body: "json" },
    { method: "GET", pattern: "/clusters/:id", subject: c.get, access: "user", body: "none" },
    { method: "POST", pattern: "/clusters/:id", subject: c.extendLease, access: "user", body: "json" },
    { method: "DELETE", pattern: "/clusters/:id", subject: c.delete, access: "user", body: "optional" },
    { method: "GET", pattern: "/clusters/:id/status", subject: c.status, access: "user", body: "none" },
    { method: "GET", pattern: "/clusters/:id/plans", subject: c.plans, access: "user", body: "none" },
    { method: "GET", pattern: "/clusters/:id/plans/:planId", subject: c.plan, access: "user", body: "none" },
    { method: "GET", pattern: "/clusters/:id/config", subject: c.getConfig, access: "user", body: "none" },
    { method: "PUT", pattern: "/clusters/:id/config", subject: c.putConfig, access: "user", body: "json" },
    { method: "GET", pattern: "/clusters/:id/services", subject: c.getServices, access: "user", body: "none" },
    { method: "POST", pattern: "/clusters/:id/services", subject: c.addServices, access: "user", body: "json" },
    ...serviceOps,
    { method: "POST", pattern: "/getNodeProperties", subject: c.nodeProperties, access: "user", body: "json" },
  ];
};

const pluginRoutes = (): Route[] => {
  const p = subjects.plugins;
  const resource = "/plugins/:type/:plugin/:resourceType/:resource";
  return [
    { method: "POST", pattern: "/plugins/sync", subject: p.sync, access: "admin", body: "none" },
    { method: "GET", pattern: "/plugins/:type", subject: p.listTypes, access: "user", body: "none" },
    { method: "GET", pattern: "/plugins/:type/:plugin", subject: p.getType, access: "user", body: "none" },
    { method: "GET", pattern: "/plugins/:type/:plugin/:resourceType", subject: p.listResources, access: "admin", body: "none" },
    { method: "POST", pattern: resource, subject: p.upload, access: "admin", body: "upload" },
    { method: "GET", pattern: resource, subject: p.listVersions, access: "admin", body: "none" },
    { method: "DELETE", pattern: resource, subject: p.deleteResource, access: "admin", body: "none" },
    { method: "DELETE", pattern: `${resource}/versions/:version`, subject: p.deleteVersion, access: "admin", body: "none" },
    { method: "POST", pattern: `${resource}/versions/:version/stage`, subject: p.stage, access: "admin", body: "none" },
    { method: "POST", pattern: `${resource}/versions/:version/recall`, subject: p.recall, access: "admin", body: "none" },
  ];
};

const metricRoutes = (): Route[] => [
  { method: "GET", pattern: "/metrics/queues", subject: subjects.metrics.queues, access: "admin", denialStatus: 403, body: "none" },
  // Who may see what is decided by the metrics service (spec 4.9: 403 and 405 cases).
  { method: "GET", pattern: "/metrics/nodes/usage", subject: subjects.metrics.nodeUsage, access: "user", body: "none" },
];

/** Every REST route: method + path -> owning service subject and required role. */
export function apiRoutes(): Route[] {
  const t = subjects.tenancy;
  return [
    { method: "GET", pattern: "/status", access: "public", body: "none" },
    { method: "GET", pattern: "/tenants", subject: t.tenants.list, access: "superadmin", body: "none" },
    { method: "POST", pattern: "/tenants", subject: t.tenants.create, access: "superadmin", body: "json" },
    { method: "GET", pattern: "/tenants/:id", subject: t.tenants.get, access: "superadmin", body: "none" },
    { method: "PUT", pattern: "/tenants/:id", subject: t.tenants.update, access: "superadmin", body: "json" },
    { method: "DELETE", pattern: "/tenants/:id", subject: t.tenants.delete, access: "superadmin", body: "none" },
    { method: "GET", pattern: "/provisioners", subject: t.provisioners.list, access: "superadmin", body: "none" },
    { method: "GET", pattern: "/provisioners/:id", subject: t.provisioners.get, access: "superadmin", body: "none" },
    ...catalogRoutes(),
    { method: "GET", pattern: "/providers/:name/hosts", subject: t.hostpool.hosts, access: "admin", body: "none" },
    { method: "DELETE", pattern: "/providers/:name/hosts/:host/quarantine", subject: t.hostpool.release, access: "admin", body: "none" },
    { method: "GET", pattern: "/export", subject: t.export, access: "user", body: "none" },
    { method: "POST", pattern: "/import", subject: t.import, access: "admin", denialStatus: 403, body: "json" },
    ...clusterRoutes(),
    ...pluginRoutes(),
    ...metricRoutes(),
  ];
}
