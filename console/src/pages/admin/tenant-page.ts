/**
 * `#/admin/tenants/:name` (superadmin): edit a tenant's workers, quotas and description; delete it after a
 * confirmation. The server's refusals show as it words them (409: workers left, quota below use, live clusters).
 */
import type { Tenant } from "@corral/contracts";
import { confirmDialog } from "../../components/dialog.js";
import { h, replaceChildren } from "../../components/dom.js";
import { clearErrors, formMessage, showServerError } from "../../components/form.js";
import { TENANTS_PATH } from "../../paths.js";
import type { MountedPage, PageContext } from "../../router.js";
import { superadminOnly } from "./restricted.js";
import { tenantForm } from "./tenant-form.js";

function tenantPage(ctx: PageContext): MountedPage {
  const name = ctx.params["name"] ?? "";
  const crumbs = h("p", { class: "crumbs" }, h("a", { href: `#${TENANTS_PATH}` }, "Tenants"));
  const element = h("section", { class: "tenant" }, crumbs, h("h1", null, `Tenant ${name}`), h("p", { class: "muted" }, "Loading…"));

  const draw = (tenant: Tenant, saved: boolean) => {
    const form = tenantForm(tenant);
    const message = formMessage();
    const save = async (event: Event) => {
      event.preventDefault();
      try {
        draw(await ctx.api.call("tenancy.tenants.update", { params: { id: name }, body: { tenant: form.read() } }), true);
      } catch (err) {
        showServerError(err, form.fields, message);
      }
    };
    const remove = async () => {
      const sure = await confirmDialog({
        title: `Delete tenant ${name}`,
        body: h("p", null, "Its catalog, plugin resources and records go with it. It needs 0 workers and no live clusters."),
        confirmLabel: "Delete tenant",
        destructive: true,
      });
      if (!sure) return;
      try {
        clearErrors(form.fields, message);
        await ctx.api.call("tenancy.tenants.delete", { params: { id: name } });
        ctx.navigate(TENANTS_PATH);
      } catch (err) {
        showServerError(err, form.fields, message);
      }
    };
    replaceChildren(
      element,
      crumbs,
      h("h1", null, `Tenant ${name}`),
      h(
        "form",
        { class: "card tenant-form", onsubmit: save, novalidate: true, "aria-label": `Tenant ${name}` },
        ...form.fields.map((f) => f.element),
        message.element,
        h("p", { class: "ok", role: "status" }, saved ? "Saved." : ""),
        h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Save"), h("button", { type: "button", class: "danger", onclick: remove }, "Delete tenant")),
      ),
    );
  };
  ctx.api.call("tenancy.tenants.get", { params: { id: name } }).then(
    (tenant) => draw(tenant, false),
    (err: unknown) => replaceChildren(element, crumbs, h("h1", null, `Tenant ${name}`), h("p", { class: "error", role: "alert" }, `Could not read it: ${(err as Error).message}`)),
  );
  return { element };
}

export const tenantPageForSuperadmin = superadminOnly(tenantPage);
