/** Sign-in: user and tenant (the identity headers), and a token from the token server when security is on. */
import { apiClient } from "../api.js";
import { h } from "../components/dom.js";
import { field, formMessage, showServerError } from "../components/form.js";
import { HOME_PATH } from "../paths.js";
import type { MountedPage, PageContext } from "../router.js";
import { signIn, type Session } from "../session.js";

export function signInPage(ctx: PageContext): MountedPage {
  const user = field({ name: "user", label: "User", required: true, value: "admin" });
  const tenant = field({ name: "tenant", label: "Tenant", required: true, value: "superadmin" });
  const token = field({
    name: "token",
    label: "Token",
    sensitive: true,
    hint: "Only with security on: the access_token of GET /token on the token server (docs/security.md).",
  });
  const message = formMessage();
  const submit = async (event: Event) => {
    event.preventDefault();
    const session: Session = { userId: user.value().trim(), tenant: tenant.value().trim(), ...(token.value() ? { token: token.value().trim() } : {}) };
    try {
      // A read of the clusters proves the identity (and the token) before it is kept.
      await apiClient(session).call("clusters.list");
      signIn(session);
      ctx.navigate(HOME_PATH);
    } catch (err) {
      showServerError(err, [user, tenant, token], message);
    }
  };
  const form = h("form", { class: "card sign-in", onsubmit: submit }, user.element, tenant.element, token.element, message.element, h("button", { type: "submit", class: "primary" }, "Sign in"));
  return { element: h("section", null, h("h1", null, "Sign in"), form) };
}
