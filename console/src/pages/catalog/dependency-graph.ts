/**
 * Draws the services' dependency graph (service-graph.ts) as SVG: one column per level, level 0 on the left,
 * an arrow from each service to what it requires (solid) or uses (dashed), conflicts as red dashed arcs. Each
 * service is a link to its page, so the graph is walked with Tab.
 */
import type { Service } from "@corral/contracts";
import { h } from "../../components/dom.js";
import { s } from "../../components/svg.js";
import { catalogEntityPath } from "../../paths.js";
import { serviceGraph, type GraphEdge, type GraphNode } from "./service-graph.js";

const NODE_W = 168;
const NODE_H = 32;
const GAP_X = 72;
const GAP_Y = 12;
const PAD = 12;
const HEADER = 22;
const MAX_LABEL = 21;

const left = (n: GraphNode) => PAD + n.level * (NODE_W + GAP_X);
const top = (n: GraphNode) => PAD + HEADER + n.row * (NODE_H + GAP_Y);
const middle = (n: GraphNode) => top(n) + NODE_H / 2;

function edgePath(from: GraphNode, to: GraphNode, kind: GraphEdge["kind"]): string {
  if (kind === "conflicts" && from.level === to.level) {
    // Same column: an arc out to the right and back.
    const x = left(from) + NODE_W;
    const bulge = x + 28 + Math.abs(from.row - to.row) * 6;
    return `M${x},${middle(from)} C${bulge},${middle(from)} ${bulge},${middle(to)} ${x},${middle(to)}`;
  }
  const [a, b] = from.level >= to.level ? [from, to] : [to, from];
  const x1 = left(a);
  const x2 = left(b) + NODE_W;
  const bend = Math.max(24, (x1 - x2) / 2);
  return `M${x1},${middle(a)} C${x1 - bend},${middle(a)} ${x2 + bend},${middle(b)} ${x2},${middle(b)}`;
}

function nodeElement(node: GraphNode): SVGElement {
  const label = node.missing ? `${node.name} (missing)` : node.name;
  const shown = label.length > MAX_LABEL ? `${label.slice(0, MAX_LABEL - 1)}…` : label;
  const parts = [
    s("title", {}, node.missing ? `${node.name}: required, but no service has or provides it` : node.name),
    s("rect", { x: left(node), y: top(node), width: NODE_W, height: NODE_H, rx: 5 }),
    s("text", { x: left(node) + 10, y: middle(node) + 5 }, shown),
  ];
  const attrs = { class: node.missing ? "node missing" : "node", "data-service": node.name, "data-level": node.level };
  return node.missing ? s("g", attrs, ...parts) : s("a", { ...attrs, href: `#${catalogEntityPath("services", node.name)}` }, ...parts);
}

/** While a service has focus or the pointer, its edges (implied ones too) stand out and the rest fade. */
function highlightOnFocus(svg: SVGSVGElement): void {
  const mark = (name: string | undefined) => {
    svg.classList.toggle("focusing", name !== undefined);
    for (const edge of svg.querySelectorAll<SVGPathElement>(".edge")) {
      edge.classList.toggle("active", name !== undefined && (edge.dataset["from"] === name || edge.dataset["to"] === name));
    }
  };
  const nodeOf = (event: Event) => (event.target as Element).closest<SVGElement>(".node")?.dataset["service"];
  svg.addEventListener("focusin", (e) => mark(nodeOf(e)));
  svg.addEventListener("focusout", () => mark(undefined));
  svg.addEventListener("mouseover", (e) => mark(nodeOf(e)));
  svg.addEventListener("mouseleave", () => mark(undefined));
}

export function dependencyGraph(services: readonly Service[]): HTMLElement {
  const graph = serviceGraph(services);
  const byName = new Map(graph.nodes.map((n) => [n.name, n]));
  const rows = Math.max(1, ...graph.nodes.map((n) => n.row + 1));
  const width = PAD * 2 + Math.max(1, graph.levels) * NODE_W + Math.max(0, graph.levels - 1) * GAP_X + 40;
  const height = PAD * 2 + HEADER + rows * (NODE_H + GAP_Y);
  const arrow = (id: string) =>
    s("marker", { id, viewBox: "0 0 10 10", refX: 9, refY: 5, markerWidth: 7, markerHeight: 7, orient: "auto-start-reverse" }, s("path", { d: "M0,0 L10,5 L0,10 z" }));
  const svg = s(
    "svg",
    { class: "dependency-graph", width, height, viewBox: `0 0 ${width} ${height}`, role: "group", "aria-label": "Service dependencies by level" },
    s("defs", {}, arrow("dep-arrow-requires"), arrow("dep-arrow-uses")),
    ...Array.from({ length: graph.levels }, (_, l) => s("text", { class: "level", x: PAD + l * (NODE_W + GAP_X), y: PAD + 12 }, `Level ${l}`)),
    ...graph.edges.flatMap((e) => {
      const from = byName.get(e.from);
      const to = byName.get(e.to);
      if (!from || !to) return [];
      const marker = e.kind === "conflicts" ? undefined : `url(#dep-arrow-${e.kind})`;
      return [s("path", { class: `edge ${e.kind}${e.implied ? " implied" : ""}`, d: edgePath(from, to, e.kind), "marker-end": marker, "data-from": e.from, "data-to": e.to, "data-kind": e.kind }, s("title", {}, `${e.from} ${e.kind === "conflicts" ? "conflicts with" : e.kind} ${e.to}`))];
    }),
    ...graph.nodes.map(nodeElement),
  );
  highlightOnFocus(svg);
  const showImplied = h("input", { type: "checkbox", onchange: (e: Event) => svg.classList.toggle("all", (e.target as HTMLInputElement).checked) });
  const legend = h(
    "p",
    { class: "graph-legend muted" },
    h("span", { class: "key requires" }, "requires"),
    h("span", { class: "key uses" }, "uses"),
    h("span", { class: "key conflicts" }, "conflicts"),
    " Install and runtime dependencies together; arrows point at the dependency. ",
    h("label", null, showImplied, " Show dependencies implied by others"),
    " (a service's own show when it has focus).",
  );
  return h("figure", { class: "card graph" }, h("figcaption", null, h("h2", null, "Dependencies")), h("div", { class: "graph-scroll" }, svg), legend);
}
