/**
 * A browser's part of a redirect flow in plain HTTP, for tests of single sign-on: requests follow `Location`
 * headers and carry the cookies earlier answers set (by name and path; every server of a test is on 127.0.0.1,
 * and cookies ignore ports, as in a browser).
 */

interface StoredCookie {
  value: string;
  path: string;
}

export class CookieJar {
  readonly #cookies = new Map<string, StoredCookie>();

  /** Keeps what the answer's `Set-Cookie` headers set; `Max-Age=0` removes a cookie. */
  store(res: Response, url: URL): void {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attributes] = line.split(";").map((p) => p.trim());
      const eq = pair.indexOf("=");
      if (eq <= 0) continue;
      const name = pair.slice(0, eq);
      const attribute = (key: string) => attributes.find((a) => a.toLowerCase().startsWith(`${key}=`))?.slice(key.length + 1);
      const path = attribute("path") ?? url.pathname.replace(/\/[^/]*$/, "/");
      const key = `${name}\u0000${path}`;
      if (attribute("max-age") === "0" || attribute("expires")?.includes("1970")) this.#cookies.delete(key);
      else this.#cookies.set(key, { value: pair.slice(eq + 1), path });
    }
  }

  /** The `Cookie` header for a request to `url`. */
  headerFor(url: URL): string {
    const sent: string[] = [];
    for (const [key, cookie] of this.#cookies) {
      const name = key.split("\u0000")[0]!;
      if (url.pathname === cookie.path || url.pathname.startsWith(cookie.path.endsWith("/") ? cookie.path : `${cookie.path}/`)) sent.push(`${name}=${cookie.value}`);
    }
    return sent.join("; ");
  }

  /** Whether a cookie of that name is kept. */
  has(name: string): boolean {
    return [...this.#cookies.keys()].some((key) => key.startsWith(`${name}\u0000`));
  }
}

export interface Visit {
  /** The last answer: the first one that is not a redirect, or the redirect `stopAt` accepted. */
  response: Response;
  /** Its URL. */
  url: URL;
  /** Where that answer redirects to, when it is a redirect `stopAt` stopped at. */
  location?: URL;
  /** Every URL requested, in order. */
  visited: URL[];
}

export interface VisitOptions {
  jar: CookieJar;
  /** Stop before requesting a redirect target this accepts (the answer that named it is returned). */
  stopAt?: (target: URL) => boolean;
  /** @default "GET" */
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  /** @default 20 */
  maxRedirects?: number;
}

/** Requests `start` and follows redirects as a browser does (a 303 or a redirect of a POST becomes a GET). */
export async function visit(start: string | URL, options: VisitOptions): Promise<Visit> {
  const visited: URL[] = [];
  let url = new URL(start);
  let method = options.method ?? "GET";
  let body = options.body;
  for (let hop = 0; hop <= (options.maxRedirects ?? 20); hop++) {
    visited.push(url);
    const cookie = options.jar.headerFor(url);
    const response = await fetch(url, {
      method,
      redirect: "manual",
      headers: { ...options.headers, ...(cookie ? { cookie } : {}) },
      ...(body !== undefined ? { body } : {}),
    });
    options.jar.store(response, url);
    const location = response.headers.get("location");
    if (response.status < 300 || response.status >= 400 || !location) return { response, url, visited };
    const target = new URL(location, url);
    if (options.stopAt?.(target)) return { response, url, location: target, visited };
    await response.arrayBuffer();
    if (response.status === 303 || method === "POST") {
      method = "GET";
      body = undefined;
    }
    url = target;
  }
  throw new Error(`more than ${options.maxRedirects ?? 20} redirects from ${start}: ${visited.map((u) => u.href).join(" -> ")}`);
}
