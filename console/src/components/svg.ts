/** `s("rect", { x: 0, width: 10 })`: the SVG counterpart of dom.ts's `h` (attributes only; text is always text). */
import { append, type Child } from "./dom.js";

const SVG_NS = "http://www.w3.org/2000/svg";

export function s<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number | undefined> = {}, ...children: Child[]): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) if (value !== undefined) el.setAttribute(key, String(value));
  append(el, children);
  return el;
}
