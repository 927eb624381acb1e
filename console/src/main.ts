/** The console's entry: draws the shell (navigation, identity) and mounts the page the hash names. */
import { apiClient } from "./api.js";
import { h, replaceChildren } from "./components/dom.js";
import { pages } from "./pages.js";
import { HOME_PATH, SIGN_IN_PATH } from "./paths.js";
import { matchRoute, navigate, type MountedPage } from "./router.js";
import { currentSession, signOut, type Session } from "./session.js";

const root = document.getElementById("app") as HTMLElement;
let mounted: MountedPage | undefined;

function navBar(session: Session | undefined, activePattern: string): HTMLElement {
  // Signed out, only the pages open to anyone (help) are in the navigation.
  const links = pages
    .filter((p) => p.nav && (session ? (p.nav.visible?.(session) ?? true) : p.public))
    .map((p) => h("a", { href: `#${p.pattern}`, "aria-current": p.pattern === activePattern ? "page" : undefined }, p.nav?.label ?? p.title));
  const who = session
    ? h(
        "span",
        { class: "who" },
        h("span", { "data-testid": "identity" }, `${session.userId} @ ${session.tenant}`),
        h("button", { type: "button", class: "link", onclick: () => (signOut(), navigate(SIGN_IN_PATH)) }, "Sign out"),
      )
    : null;
  return h("header", { class: "top" }, h("a", { class: "brand", href: `#${HOME_PATH}` }, "Corral"), h("nav", { "aria-label": "Main" }, ...links), who);
}

function show(): void {
  mounted?.dispose?.();
  mounted = undefined;
  const session = currentSession();
  const hash = location.hash || `#${session ? HOME_PATH : SIGN_IN_PATH}`;
  const match = matchRoute(pages, hash);
  if (!session && !match?.page.public) return navigate(SIGN_IN_PATH);
  const main = h("main", { id: "main", tabIndex: -1 });
  if (!match) {
    replaceChildren(main, h("h1", null, "Not found"), h("p", null, "No page at ", h("code", null, hash), ". ", h("a", { href: `#${HOME_PATH}` }, "Go to the clusters")));
  } else {
    document.title = `${match.page.title} · Corral`;
    mounted = match.page.mount({
      params: match.params,
      query: match.query,
      // Public pages run without a session: sign-in signs in before using the API, help reads only the guides.
      session: session ?? { userId: "", tenant: "" },
      api: apiClient(session ?? { userId: "", tenant: "" }),
      navigate,
    });
    main.appendChild(mounted.element);
  }
  replaceChildren(root, h("a", { class: "skip", href: "#main", onclick: (e: Event) => (e.preventDefault(), main.focus()) }, "Skip to content"), navBar(session, match?.page.pattern ?? ""), main);
}

window.addEventListener("hashchange", show);
show();
