import type { Method } from "./routes.js";

/** What the router needs of a route: its method and path pattern. */
export interface RoutePattern {
  method: Method;
  /** `:name` segments become params. */
  pattern: string;
}

export type RouteMatch<R extends RoutePattern> =
  | { kind: "found"; route: R; params: Record<string, string> }
  | { kind: "method_not_allowed"; allowed: Method[] }
  | { kind: "not_found" }
  | { kind: "bad_path"; message: string };

interface CompiledRoute<R extends RoutePattern> {
  route: R;
  segments: Array<{ literal: string } | { param: string }>;
  literalCount: number;
}

/** Splits a path into segments: duplicate and trailing slashes are ignored. */
export function pathSegments(path: string): string[] {
  return path.split("/").filter((s) => s.length > 0);
}

/**
 * Matches method + path against the route table. Literal segments win over parameters, so
 * `/clusters/:id/services/start` beats `/clusters/:id/services/:service`.
 */
export function createRouter<R extends RoutePattern>(routes: R[]): (method: string, path: string) => RouteMatch<R> {
  const bySize = new Map<number, CompiledRoute<R>[]>();
  for (const route of routes) {
    const segments = pathSegments(route.pattern).map((s) => (s.startsWith(":") ? { param: s.slice(1) } : { literal: s }));
    const compiled = { route, segments, literalCount: segments.filter((s) => "literal" in s).length };
    const list = bySize.get(segments.length) ?? [];
    list.push(compiled);
    bySize.set(segments.length, list);
  }
  for (const list of bySize.values()) list.sort((a, b) => b.literalCount - a.literalCount);

  return (method, path) => {
    const parts = pathSegments(path);
    const candidates = bySize.get(parts.length) ?? [];
    let shapeMatched: CompiledRoute<R> | undefined;
    const allowed = new Set<Method>();
    for (const c of candidates) {
      if (!c.segments.every((seg, i) => !("literal" in seg) || seg.literal === parts[i])) continue;
      if (shapeMatched && c.literalCount < shapeMatched.literalCount) break;
      shapeMatched = c;
      allowed.add(c.route.method);
      if (c.route.method !== method) continue;
      const params: Record<string, string> = {};
      for (let i = 0; i < c.segments.length; i++) {
        const seg = c.segments[i];
        if (seg && "param" in seg) {
          try {
            params[seg.param] = decodeURIComponent(parts[i] ?? "");
          } catch {
            return { kind: "bad_path", message: `path segment "${parts[i]}" is not valid percent-encoding` };
          }
        }
      }
      return { kind: "found", route: c.route, params };
    }
    if (allowed.size > 0) return { kind: "method_not_allowed", allowed: [...allowed] };
    return { kind: "not_found" };
  };
}
