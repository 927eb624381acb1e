/**
 * The web console (workspace console/): its page at `/` and `/ui/`, its script and style sheet at `/ui/{file}`.
 * No identity or token is needed for these files (they hold nothing of any tenant); the page's API calls carry
 * the identity. Files are looked up by exact name in the built map, so no path can reach anything else.
 */
import { buildConsole, type ConsoleFiles } from "@corral/console";
import type { Exchange } from "./http.js";

export interface ConsoleRoutes {
  /** Answers a `GET` or `HEAD` of the console's paths; false for every other request. */
  answer(method: string, path: string, ex: Exchange): boolean;
}

export const CONSOLE_PREFIX = "/ui/";

/** The page may load only what this gateway serves; no inline script, no other host. */
const CONSOLE_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'";

export async function openConsole(): Promise<ConsoleRoutes> {
  const files: ConsoleFiles = await buildConsole();
  const index = files.get("index.html");
  if (!index) throw new Error("the console build has no index.html");
  return {
    answer(method, path, ex) {
      if (method !== "GET" && method !== "HEAD") return false;
      if (path === "/" || path === "/ui" || path === CONSOLE_PREFIX || path === `${CONSOLE_PREFIX}index.html`) {
        // The page names the current script and style sheet: always asked again, so an upgrade shows at once.
        ex.send(200, index.bytes, { "content-type": index.contentType, "cache-control": "no-cache", "content-security-policy": CONSOLE_POLICY, "x-content-type-options": "nosniff" });
        return true;
      }
      if (!path.startsWith(CONSOLE_PREFIX)) return false;
      const name = path.slice(CONSOLE_PREFIX.length);
      const file = files.get(name);
      if (!file || name === "index.html") {
        ex.error(404, "not_found", `the console has no file ${JSON.stringify(name.slice(0, 80))}; it has ${[...files.keys()].filter((n) => n !== "index.html").join(", ")}`);
        return true;
      }
      // Rebuilt at each gateway start: revalidation is cheap, and a stale bundle after an upgrade would break the page.
      ex.send(200, file.bytes, { "content-type": file.contentType, "cache-control": "no-cache", "x-content-type-options": "nosniff" });
      return true;
    },
  };
}
