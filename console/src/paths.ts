/** Hash paths pages link to (pages.ts maps them to pages; a page module imports these, never pages.ts). */
export const SIGN_IN_PATH = "/sign-in";
export const HOME_PATH = "/clusters";
export const NEW_CLUSTER_PATH = "/clusters/new";
export const clusterPath = (id: string) => `/clusters/${encodeURIComponent(id)}`;
export const CATALOG_PATH = "/catalog";
export const catalogKindPath = (kind: string) => `/catalog/${encodeURIComponent(kind)}`;
export const catalogEntityPath = (kind: string, name: string) => `/catalog/${encodeURIComponent(kind)}/${encodeURIComponent(name)}`;
/** `new` comes before the kind, so no entity name (which may be `new`) is ever shadowed. */
export const newCatalogEntityPath = (kind: string) => `/catalog/new/${encodeURIComponent(kind)}`;
export const TENANTS_PATH = "/admin/tenants";
export const tenantPath = (name: string) => `/admin/tenants/${encodeURIComponent(name)}`;
export const PROVISIONERS_PATH = "/admin/provisioners";
export const METRICS_PATH = "/metrics";
export const AUDIT_PATH = "/audit";
export const auditPath = (filters: Readonly<Record<string, string>>) => `${AUDIT_PATH}?${new URLSearchParams(filters).toString()}`;
export const HELP_PATH = "/help";
