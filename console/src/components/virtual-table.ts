/**
 * A table that draws only the rows in view (fixed row height), so 10,000 rows cost what 30 do. Rows are real
 * table rows inside a scrolling body; `update(rows)` redraws in place and keeps the scroll position.
 */
import { h, replaceChildren, type Child } from "./dom.js";

export interface Column<Row> {
  title: string;
  cell(row: Row): Child;
  /** CSS width (`8rem`, `20%`); the rest share what is left. */
  width?: string;
  /** Left out on a narrow screen (style.css), so the columns that matter keep room. */
  hideWhenNarrow?: boolean;
}

export interface VirtualTableOptions<Row> {
  columns: readonly Column<Row>[];
  /** Stable key of a row, for `data-key` (tests and focus). */
  key(row: Row): string;
  /** Shown when there are no rows. */
  empty: string;
  /** Accessible name of the table. */
  label: string;
  /** Pixels; keep in step with `.vtable tr` in style.css. @default 36 */
  rowHeight?: number;
  /** Rows drawn beyond the visible ones, above and below. @default 8 */
  overscan?: number;
}

export interface VirtualTable<Row> {
  element: HTMLElement;
  update(rows: readonly Row[]): void;
}

export function virtualTable<Row>(options: VirtualTableOptions<Row>): VirtualTable<Row> {
  const rowHeight = options.rowHeight ?? 36;
  const overscan = options.overscan ?? 8;
  const narrowClass = (c: Column<Row>) => (c.hideWhenNarrow ? "narrow-hide" : undefined);
  const colgroup = h("colgroup", null, ...options.columns.map((c) => h("col", { class: narrowClass(c), style: c.width ? `width:${c.width}` : undefined })));
  const head = h("thead", null, h("tr", null, ...options.columns.map((c) => h("th", { scope: "col", class: narrowClass(c) }, c.title))));
  const body = h("tbody");
  const table = h("table", { class: "vtable", "aria-label": options.label, "aria-rowcount": 0 }, colgroup, head, body);
  const scroller = h("div", { class: "vtable-scroll", tabIndex: 0, role: "region", "aria-label": `${options.label} (scrolls)` }, table);
  const count = h("p", { class: "vtable-count", "aria-live": "polite" });
  const element = h("div", { class: "vtable-wrap" }, scroller, count);
  let rows: readonly Row[] = [];
  let drawn = { first: -1, last: -1, length: -1 };

  const draw = (force: boolean) => {
    const viewHeight = scroller.clientHeight || 600;
    const first = Math.max(0, Math.floor(scroller.scrollTop / rowHeight) - overscan);
    const last = Math.min(rows.length, Math.ceil((scroller.scrollTop + viewHeight) / rowHeight) + overscan);
    if (!force && first === drawn.first && last === drawn.last && rows.length === drawn.length) return;
    drawn = { first, last, length: rows.length };
    const spacer = (height: number) => (height > 0 ? h("tr", { class: "vtable-spacer", "aria-hidden": "true", style: `height:${height}px` }) : null);
    const visible: Child[] = [];
    for (let i = first; i < last; i++) {
      const row = rows[i] as Row;
      visible.push(h("tr", { dataset: { key: options.key(row) }, "aria-rowindex": i + 2 }, ...options.columns.map((c) => h("td", { class: narrowClass(c) }, c.cell(row)))));
    }
    if (rows.length === 0) visible.push(h("tr", null, h("td", { colSpan: options.columns.length, class: "empty" }, options.empty)));
    replaceChildren(body, spacer(first * rowHeight), ...visible, spacer((rows.length - last) * rowHeight));
  };

  let frame = 0;
  scroller.addEventListener("scroll", () => {
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      draw(false);
    });
  });
  return {
    element,
    update(next) {
      rows = next;
      table.setAttribute("aria-rowcount", String(rows.length + 1));
      count.textContent = `${rows.length} ${rows.length === 1 ? "row" : "rows"}`;
      draw(true);
      // The first rows can grow the scroller (an empty one is one row high): draw again at its new height.
      requestAnimationFrame(() => draw(false));
    },
  };
}
