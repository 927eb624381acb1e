/** `#/admin/tenants` (superadmin): every tenant with its workers and quotas, and the form that creates one. */
import type { Tenant } from "@corral/contracts";
import { h, replaceChildren } from "../../components/dom.js";
import { field, formMessage, showServerError } from "../../components/form.js";
import { virtualTable } from "../../components/virtual-table.js";
import { tenantPath } from "../../paths.js";
import type { MountedPage, PageContext } from "../../router.js";
import { superadminOnly } from "./restricted.js";
import { tenantForm } from "./tenant-form.js";

const limit = (value: number | undefined) => (value === undefined ? "unlimited" : String(value));

function tenantsPage(ctx: PageContext): MountedPage {
  const table = virtualTable<Tenant>({
    label: "Tenants",
    empty: "No tenants",
    key: (t) => t.name,
    columns: [
      { title: "Name", cell: (t) => h("a", { href: `#${tenantPath(t.name)}` }, t.name) },
      { title: "Workers", width: "6rem", cell: (t) => t.workers },
      { title: "Most clusters", width: "9rem", cell: (t) => limit(t.maxClusters) },
      { title: "Most nodes", width: "8rem", cell: (t) => limit(t.maxNodes) },
      { title: "Description", hideWhenNarrow: true, cell: (t) => t.description ?? "" },
    ],
  });
  const problem = h("p", { class: "error", role: "alert" });
  const reload = () =>
    ctx.api.call("tenancy.tenants.list").then(
      (tenants) => ((problem.textContent = ""), table.update([...tenants].sort((a, b) => a.name.localeCompare(b.name)))),
      (err: unknown) => void (problem.textContent = `Could not read the tenants: ${(err as Error).message}`),
    );

  const formSlot = h("div");
  const drawForm = (created?: string) => {
    const form = tenantForm(undefined);
    const bootstrap = field({ name: "bootstrap", label: "Copy the superadmin's catalog and plugin resources into it", type: "checkbox" });
    const message = formMessage();
    const submit = async (event: Event) => {
      event.preventDefault();
      try {
        const tenant = form.read();
        await ctx.api.call("tenancy.tenants.create", { body: { tenant, bootstrap: bootstrap.value() === "true" } });
        drawForm(tenant.name);
        void reload();
      } catch (err) {
        showServerError(err, form.fields, message);
      }
    };
    replaceChildren(
      formSlot,
      h(
        "form",
        { class: "card tenant-form", onsubmit: submit, novalidate: true, "aria-labelledby": "new-tenant" },
        h("h2", { id: "new-tenant" }, "New tenant"),
        ...form.fields.map((f) => f.element),
        bootstrap.element,
        message.element,
        h("p", { class: "ok", role: "status" }, created ? `Created tenant ${created}.` : ""),
        h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Create tenant")),
      ),
    );
  };
  drawForm();
  void reload();
  return { element: h("section", { class: "tenants" }, h("h1", null, "Tenants"), problem, table.element, formSlot) };
}

export const tenantsPageForSuperadmin = superadminOnly(tenantsPage);
