/**
 * A stacked bar chart drawn as SVG (no library, nothing fetched): one bar per category, its series stacked bottom
 * up, a value axis with round ticks, a legend, and the same figures as a table for keyboards and screen readers.
 */
import { h } from "./dom.js";
import { s } from "./svg.js";

export interface ChartSeries {
  name: string;
  /** One per category. */
  values: readonly number[];
}

export interface BarChartOptions {
  /** Caption and accessible name. */
  title: string;
  categories: readonly string[];
  /** Stacked in this order, bottom first; colours by position (`.series-0`, `.series-1`, ...). */
  series: readonly ChartSeries[];
  format(value: number): string;
  /** Shown instead of the chart when there are no categories. */
  empty: string;
  /** Categories are times, oldest first: a chart wider than the screen opens scrolled to the newest. */
  timeSeries?: boolean;
}

const PLOT_H = 200;
const AXIS_W = 64;
const LABELS_H = 40;
const TOP = 12;
const MIN_SLOT = 24;
const MAX_SLOT = 72;
const LABEL_SPACE = 64;

/** Figures with two significant digits (0.0042, 0.31, 12, 340). */
export function formatAmount(value: number): string {
  if (value === 0) return "0";
  return value >= 100 ? value.toFixed(0) : String(Number(value.toPrecision(2)));
}

/** A round step (1, 2 or 5 times a power of ten) giving about four ticks up to `max`. */
export function tickStep(max: number): number {
  if (!(max > 0)) return 1;
  const rough = max / 4;
  const power = 10 ** Math.floor(Math.log10(rough));
  const f = rough / power;
  return (f <= 1 ? 1 : f <= 2 ? 2 : f <= 5 ? 5 : 10) * power;
}

function valuesTable(options: BarChartOptions, totals: readonly number[]): HTMLElement {
  const showTotal = options.series.length > 1;
  return h(
    "details",
    { class: "chart-values" },
    h("summary", null, "Values"),
    h(
      "table",
      { class: "plain" },
      h("thead", null, h("tr", null, h("th", { scope: "col" }, ""), ...options.series.map((se) => h("th", { scope: "col" }, se.name)), showTotal ? h("th", { scope: "col" }, "total") : null)),
      h(
        "tbody",
        null,
        ...options.categories.map((c, i) =>
          h(
            "tr",
            { dataset: { category: c } },
            h("th", { scope: "row" }, c),
            ...options.series.map((se) => h("td", null, options.format(se.values[i] ?? 0))),
            showTotal ? h("td", null, options.format(totals[i] ?? 0)) : null,
          ),
        ),
      ),
    ),
  );
}

export function barChart(options: BarChartOptions): HTMLElement {
  const { categories, series } = options;
  const caption = h("figcaption", null, options.title);
  if (categories.length === 0) return h("figure", { class: "chart" }, caption, h("p", { class: "muted" }, options.empty));

  const totals = categories.map((_, i) => series.reduce((sum, se) => sum + (se.values[i] ?? 0), 0));
  const step = tickStep(Math.max(...totals));
  const top = Math.max(step, Math.ceil(Math.max(...totals) / step) * step);
  const slot = Math.max(MIN_SLOT, Math.min(MAX_SLOT, Math.floor(720 / categories.length)));
  const width = AXIS_W + categories.length * slot + 8;
  const height = TOP + PLOT_H + LABELS_H;
  const y = (value: number) => TOP + PLOT_H - (value / top) * PLOT_H;
  const labelEvery = Math.ceil(LABEL_SPACE / slot);
  // About 7 px a character at the labels' size; longer names are cut (the table and tooltips keep them whole).
  const maxChars = Math.max(3, Math.floor((slot * labelEvery) / 7));

  const ticks = Array.from({ length: Math.round(top / step) + 1 }, (_, i) => i * step);
  const axis = ticks.map((v) =>
    s("g", { class: "tick" }, s("line", { x1: AXIS_W, x2: width, y1: y(v), y2: y(v) }), s("text", { x: AXIS_W - 6, y: y(v) + 4, "text-anchor": "end" }, options.format(v))),
  );
  const bars = categories.map((category, i) => {
    const x = AXIS_W + i * slot + slot * 0.15;
    let base = 0;
    const segments = series.map((se, k) => {
      const value = se.values[i] ?? 0;
      const rect = s(
        "rect",
        { class: `bar series-${k}`, x, width: slot * 0.7, y: y(base + value), height: y(base) - y(base + value), "data-series": se.name, "data-value": value },
        s("title", {}, `${category} · ${se.name}: ${options.format(value)}`),
      );
      base += value;
      return rect;
    });
    const shown = category.length > maxChars ? `${category.slice(0, maxChars - 1)}…` : category;
    const label = i % labelEvery === 0 ? s("text", { class: "category", x: x + slot * 0.35, y: TOP + PLOT_H + 16, "text-anchor": "middle" }, shown) : null;
    return s("g", { "data-category": category }, ...segments, label);
  });
  const svg = s("svg", { width, height, viewBox: `0 0 ${width} ${height}`, role: "img", "aria-label": options.title }, ...axis, ...bars);
  const legend = h("ul", { class: "legend" }, ...series.map((se, k) => h("li", null, h("span", { class: `swatch series-${k}`, "aria-hidden": "true" }), se.name)));
  const scroller = h("div", { class: "chart-scroll" }, svg);
  if (options.timeSeries) requestAnimationFrame(() => (scroller.scrollLeft = scroller.scrollWidth));
  return h("figure", { class: "chart" }, caption, scroller, legend, valuesTable(options, totals));
}
