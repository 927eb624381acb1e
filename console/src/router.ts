/** Hash routing (`#/clusters/42`): the page list in pages.ts maps patterns to pages; this matches and mounts them. */
import type { Api } from "./api.js";
import type { Session } from "./session.js";

/** What a page gets: its path parameters, the API client of the session, and a way to move elsewhere. */
export interface PageContext {
  params: Readonly<Record<string, string>>;
  query: URLSearchParams;
  session: Session;
  api: Api;
  navigate(path: string): void;
}

/** A mounted page: its root element, and what to stop when the user leaves it (timers, streams). */
export interface MountedPage {
  element: HTMLElement;
  dispose?(): void;
}

export interface PageDefinition {
  /** `/clusters/:id`; `:name` segments become params. */
  pattern: string;
  title: string;
  /** Shown in the navigation bar when set (and allowed for the session). */
  nav?: { label: string; visible?(session: Session): boolean };
  /** Reachable without signing in (sign-in, help); every other page sends a caller without a session to sign in. */
  public?: true;
  mount(ctx: PageContext): MountedPage;
}

export interface RouteMatch {
  page: PageDefinition;
  params: Record<string, string>;
  query: URLSearchParams;
}

/** A percent-encoded path segment decoded; undefined when it is not valid percent-encoding (the page is "not found"). */
function decoded(part: string): string | undefined {
  try {
    return decodeURIComponent(part);
  } catch {
    return undefined;
  }
}

/** `#/clusters/42?status=active` -> its page and params; literal segments win over params. */
export function matchRoute(pages: readonly PageDefinition[], hash: string): RouteMatch | undefined {
  const [path = "", search = ""] = hash.replace(/^#/, "").split("?", 2);
  const parts = path.split("/").filter(Boolean);
  let best: { match: RouteMatch; literals: number } | undefined;
  for (const page of pages) {
    const segments = page.pattern.split("/").filter(Boolean);
    if (segments.length !== parts.length) continue;
    const params: Record<string, string> = {};
    let literals = 0;
    const fits = segments.every((segment, i) => {
      const part = parts[i] ?? "";
      if (segment.startsWith(":")) {
        const value = decoded(part);
        if (value === undefined) return false;
        params[segment.slice(1)] = value;
        return true;
      }
      literals++;
      return segment === part;
    });
    if (fits && (!best || literals > best.literals)) best = { match: { page, params, query: new URLSearchParams(search) }, literals };
  }
  return best?.match;
}

export const navigate = (path: string) => {
  location.hash = `#${path}`;
};
