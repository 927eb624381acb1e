/**
 * Sign-in: user and tenant (the identity headers), and a token from the token server when security is on; or, when
 * the token server signs in through an identity provider, a button that starts that (docs/security.md, Single
 * sign-on). The token server sends the browser back here with the token in the fragment.
 */
import { ApiError, apiClient } from "../api.js";
import { h } from "../components/dom.js";
import { field, formMessage, showServerError } from "../components/form.js";
import { HOME_PATH, SIGN_IN_PATH } from "../paths.js";
import type { MountedPage, PageContext } from "../router.js";
import { isSessionRole, signIn, type Session } from "../session.js";

/** Where a browser signs in through the identity provider, as the gateway's 401 names it (`details.sso`). */
interface SignInOffer {
  provider: string;
  url: string;
}

function offerIn(err: unknown): SignInOffer | undefined {
  const sso = err instanceof ApiError ? err.details["sso"] : undefined;
  if (!sso || typeof sso !== "object") return undefined;
  const { provider, url } = sso as Record<string, unknown>;
  return typeof provider === "string" && typeof url === "string" && /^https?:\/\//.test(url) ? { provider, url } : undefined;
}

/** The session a single sign-on handed over in the fragment (`#/sign-in?token=...&user=...&tenant=...&role=...`). */
function handedOver(query: URLSearchParams): Session | undefined {
  const token = query.get("token");
  const userId = query.get("user");
  const tenant = query.get("tenant");
  if (!token || !userId || !tenant) return undefined;
  const role = query.get("role");
  return { userId, tenant, token, ...(isSessionRole(role) ? { role } : {}) };
}

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
  let stopped = false;

  const enter = async (session: Session) => {
    // A read of the clusters proves the identity (and the token) before it is kept.
    await apiClient(session).call("clusters.list");
    signIn(session);
    if (!stopped) ctx.navigate(HOME_PATH);
  };
  const submit = async (event: Event) => {
    event.preventDefault();
    const session: Session = { userId: user.value().trim(), tenant: tenant.value().trim(), ...(token.value() ? { token: token.value().trim() } : {}) };
    try {
      await enter(session);
    } catch (err) {
      showServerError(err, [user, tenant, token], message);
    }
  };
  const form = h("form", { class: "card sign-in", onsubmit: submit }, user.element, tenant.element, token.element, message.element, h("button", { type: "submit", class: "primary" }, "Sign in"));
  const offer = h("div", { class: "sign-in-sso" });
  const element = h("section", null, h("h1", null, "Sign in"), offer, form);

  const handed = handedOver(ctx.query);
  if (handed) {
    // The token must not stay in the address bar or the history.
    history.replaceState(null, "", `${location.pathname}${location.search}#${SIGN_IN_PATH}`);
    message.show("Signing in…");
    enter(handed).catch((err: unknown) => showServerError(err, [user, tenant, token], message));
  } else {
    // Asked without identity, the API's 401 names the identity provider when there is one.
    apiClient({ userId: "", tenant: "" })
      .call("clusters.list")
      .catch((err: unknown) => {
        const sso = offerIn(err);
        if (!sso || stopped) return;
        offer.append(h("a", { class: "button-link", href: sso.url, "data-testid": "sso" }, `Sign in with ${sso.provider}`), h("p", { class: "hint" }, "or with a user name and token:"));
      });
  }
  return { element, dispose: () => void (stopped = true) };
}
