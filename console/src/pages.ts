/**
 * Every page of the console, one line each: its hash path, its title, whether the navigation bar shows it.
 * A new page is a module under pages/ and a line here.
 */
import type { PageDefinition } from "./router.js";
import { clusterListPage } from "./pages/cluster-list.js";
import { clusterPage } from "./pages/cluster.js";
import { createClusterPage } from "./pages/create-cluster.js";
import { signInPage } from "./pages/sign-in.js";
import { catalogPage } from "./pages/catalog/catalog-page.js";
import { catalogEntityPage, newCatalogEntityPage } from "./pages/catalog/entity-page.js";
import { catalogKindPage } from "./pages/catalog/kind-page.js";
import { provisionersPageForSuperadmin } from "./pages/admin/provisioners-page.js";
import { tenantPageForSuperadmin } from "./pages/admin/tenant-page.js";
import { tenantsPageForSuperadmin } from "./pages/admin/tenants-page.js";
import { metricsPageForAdmins } from "./pages/metrics/metrics-page.js";
import { auditPageForAdmins } from "./pages/admin/audit-page.js";
import { helpPage } from "./pages/help.js";
import { AUDIT_PATH, CATALOG_PATH, HELP_PATH, HOME_PATH, METRICS_PATH, NEW_CLUSTER_PATH, PROVISIONERS_PATH, SIGN_IN_PATH, TENANTS_PATH } from "./paths.js";
import { isSuperadmin, isTenantAdmin } from "./session.js";

export const pages: readonly PageDefinition[] = [
  { pattern: SIGN_IN_PATH, title: "Sign in", public: true, mount: signInPage },
  { pattern: HOME_PATH, title: "Clusters", nav: { label: "Clusters" }, mount: clusterListPage },
  { pattern: NEW_CLUSTER_PATH, title: "New cluster", nav: { label: "New cluster" }, mount: createClusterPage },
  { pattern: "/clusters/:id", title: "Cluster", mount: clusterPage },
  { pattern: CATALOG_PATH, title: "Catalog", nav: { label: "Catalog" }, mount: catalogPage },
  { pattern: "/catalog/:kind", title: "Catalog", mount: catalogKindPage },
  { pattern: "/catalog/:kind/:name", title: "Catalog entity", mount: catalogEntityPage },
  { pattern: "/catalog/new/:kind", title: "New catalog entity", mount: newCatalogEntityPage },
  { pattern: METRICS_PATH, title: "Metrics", nav: { label: "Metrics", visible: isTenantAdmin }, mount: metricsPageForAdmins },
  { pattern: AUDIT_PATH, title: "Audit log", nav: { label: "Audit", visible: isTenantAdmin }, mount: auditPageForAdmins },
  { pattern: TENANTS_PATH, title: "Tenants", nav: { label: "Tenants", visible: isSuperadmin }, mount: tenantsPageForSuperadmin },
  { pattern: "/admin/tenants/:name", title: "Tenant", mount: tenantPageForSuperadmin },
  { pattern: PROVISIONERS_PATH, title: "Provisioners", nav: { label: "Provisioners", visible: isSuperadmin }, mount: provisionersPageForSuperadmin },
  { pattern: HELP_PATH, title: "Help", nav: { label: "Help" }, public: true, mount: helpPage },
];
