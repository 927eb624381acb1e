/**
 * `#/admin/provisioners` (superadmin): the registered provisioners with their capacity and the workers each runs
 * for each tenant, and per tenant the workers it asks for against those assigned and running. Read every 5 s.
 */
import type { Provisioner, Tenant } from "@corral/contracts";
import { h } from "../../components/dom.js";
import { virtualTable } from "../../components/virtual-table.js";
import { tenantPath } from "../../paths.js";
import type { MountedPage, PageContext } from "../../router.js";
import { superadminOnly } from "./restricted.js";

const REFRESH_MS = 5_000;

interface TenantWorkers {
  tenant: string;
  asked: number;
  assigned: number;
  running: number;
}

const sum = (values: Iterable<number>) => [...values].reduce((a, b) => a + b, 0);

/** `tenant: assigned (running)` for each tenant a provisioner works for. */
const perTenant = (p: Provisioner) =>
  Object.entries(p.assignments)
    .filter(([, n]) => n > 0)
    .map(([tenant, n]) => `${tenant}: ${n} (${p.usage[tenant] ?? 0} running)`)
    .join(", ") || "none";

function workersByTenant(provisioners: readonly Provisioner[], tenants: readonly Tenant[]): TenantWorkers[] {
  return tenants
    .map((t) => ({
      tenant: t.name,
      asked: t.workers,
      assigned: sum(provisioners.map((p) => p.assignments[t.name] ?? 0)),
      running: sum(provisioners.map((p) => p.usage[t.name] ?? 0)),
    }))
    .sort((a, b) => a.tenant.localeCompare(b.tenant));
}

function provisionersPage(ctx: PageContext): MountedPage {
  const provisionerTable = virtualTable<Provisioner>({
    label: "Provisioners",
    empty: "No provisioner has registered",
    key: (p) => p.id,
    columns: [
      { title: "Id", width: "10rem", cell: (p) => p.id },
      { title: "Address", width: "12rem", hideWhenNarrow: true, cell: (p) => `${p.host}:${p.port}` },
      { title: "Free / total", width: "8rem", cell: (p) => `${p.capacityFree} / ${p.capacityTotal}` },
      { title: "Workers by tenant (running)", cell: (p) => perTenant(p) },
    ],
  });
  const workerTable = virtualTable<TenantWorkers>({
    label: "Workers by tenant",
    empty: "No tenants",
    key: (w) => w.tenant,
    columns: [
      { title: "Tenant", cell: (w) => h("a", { href: `#${tenantPath(w.tenant)}` }, w.tenant) },
      { title: "Asked", width: "6rem", cell: (w) => w.asked },
      { title: "Assigned", width: "6rem", cell: (w) => w.assigned },
      { title: "Running", width: "6rem", cell: (w) => w.running },
    ],
  });
  const problem = h("p", { class: "error", role: "alert" });
  const read = async () => {
    try {
      const [provisioners, tenants] = await Promise.all([ctx.api.call("tenancy.provisioners.list"), ctx.api.call("tenancy.tenants.list")]);
      provisionerTable.update([...provisioners].sort((a, b) => a.id.localeCompare(b.id)));
      workerTable.update(workersByTenant(provisioners, tenants));
      problem.textContent = "";
    } catch (err) {
      problem.textContent = `Could not read the provisioners: ${(err as Error).message}`;
    }
  };
  void read();
  const timer = setInterval(() => void read(), REFRESH_MS);
  const element = h(
    "section",
    { class: "provisioners" },
    h("h1", null, "Provisioners"),
    problem,
    provisionerTable.element,
    h("h2", null, "Workers by tenant"),
    h("p", { class: "muted" }, "Asked: the tenant's workers setting. Assigned: spread over the provisioners by capacity. Running: started by them."),
    workerTable.element,
  );
  return { element, dispose: () => clearInterval(timer) };
}

export const provisionersPageForSuperadmin = superadminOnly(provisionersPage);
