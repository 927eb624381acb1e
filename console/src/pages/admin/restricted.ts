/** Pages only some callers open: anyone else gets a notice instead (the API refuses them the data anyway). */
import { h } from "../../components/dom.js";
import type { MountedPage, PageContext } from "../../router.js";
import { isSuperadmin, isTenantAdmin, type Session } from "../../session.js";

type Mount = (ctx: PageContext) => MountedPage;

const onlyFor =
  (allowed: (session: Session) => boolean, who: string) =>
  (mount: Mount): Mount =>
  (ctx) =>
    allowed(ctx.session) ? mount(ctx) : { element: h("section", { class: "not-allowed" }, h("h1", null, "Not available"), h("p", null, `This page is for ${who}.`)) };

export const superadminOnly = onlyFor(isSuperadmin, "the superadmin (user admin of tenant superadmin)");
export const adminOnly = onlyFor(isTenantAdmin, "admins (user admin of a tenant)");
