import { CATALOG_KINDS, subjects } from "@corral/shared";

/** Who may call a route. `public` needs no identity. */
export type Access = "public" | "user" | "admin" | "superadmin";
export type Method = "GET" | "POST" | "PUT" | "DELETE";
/** `json`: a JSON body is required; `optional`: JSON if present; `none`: any body is ignored. */
export type BodyKind = "json" | "optional" | "none";

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
    { method: "GET", pattern: "/export", subject: t.export, access: "user", body: "none" },
    { method: "POST", pattern: "/import", subject: t.import, access: "admin", denialStatus: 403, body: "json" },
  ];
}
