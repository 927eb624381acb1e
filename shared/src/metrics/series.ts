import type { Metric } from "prom-client";
import type { MetricsRegistry } from "./registry.js";

/**
 * Counters and histograms whose label sets are resolved once, for hot paths (every REST request, every served
 * NATS request). prom-client's `labels(...).observe()` validates the labels and builds a hash string on every
 * call; here a caller asks `series(labels)` once, keeps the answer, and each observation is a few additions.
 */

export interface CounterSeries {
  inc(by?: number): void;
}

export interface HistogramSeries {
  /** Records one observation (seconds, for the duration histograms). */
  observe(value: number): void;
}

export interface SeriesOptions<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
}

export interface HistogramOptions<L extends string> extends SeriesOptions<L> {
  /** Upper bounds, ascending (`+Inf` is added). */
  buckets: readonly number[];
}

export type Labels<L extends string> = Readonly<Record<L, string>>;

/** What prom-client's Registry reads from a metric when it renders `/metrics` (`Metric.get()`). */
interface ExportedValue {
  value: number;
  labels: Record<string, string>;
  metricName?: string;
}

abstract class LabeledSeries<L extends string, S> {
  protected readonly children = new Map<string, { labels: Labels<L>; series: S }>();
  readonly aggregator = "sum";
  private readonly isRegistered: boolean;

  constructor(
    registry: MetricsRegistry | undefined,
    readonly name: string,
    readonly help: string,
    private readonly labelNames: readonly L[],
  ) {
    this.isRegistered = registry !== undefined;
    // prom-client renders any registered object with a name and get(); its types list only its own classes.
    registry?.registerMetric(this as unknown as Metric);
  }

  /**
   * The series of these labels: made on first use, the same object afterwards (keep it). Without a registry
   * (metrics off) a shared series that records nothing.
   */
  series(labels: Labels<L>): S {
    if (!this.isRegistered) return this.ignored;
    const key = this.labelNames.length === 1 ? labels[this.labelNames[0]!] : this.labelNames.map((n) => labels[n]).join("\u0000");
    let child = this.children.get(key);
    if (!child) this.children.set(key, (child = { labels: { ...labels }, series: this.create() }));
    return child.series;
  }

  protected abstract create(): S;
  protected abstract readonly ignored: S;
  abstract get(): Promise<{ name: string; help: string; type: string; aggregator: string; values: ExportedValue[] }>;

  /** Forgets every series (prom-client's `registry.resetMetrics()`); series handed out before stop counting. */
  reset(): void {
    this.children.clear();
  }
}

class CounterChild implements CounterSeries {
  value = 0;
  inc(by = 1): void {
    this.value += by;
  }
}

/** A counter with pre-resolved series, registered on `registry` (none: metrics are off). */
export class LabeledCounter<L extends string> extends LabeledSeries<L, CounterSeries> {
  readonly type = "counter";
  protected readonly ignored: CounterSeries = { inc: () => {} };

  constructor(registry: MetricsRegistry | undefined, options: SeriesOptions<L>) {
    super(registry, options.name, options.help, options.labelNames);
  }

  protected create(): CounterSeries {
    return new CounterChild();
  }

  async get() {
    const values: ExportedValue[] = [];
    for (const { labels, series } of this.children.values()) values.push({ value: (series as CounterChild).value, labels });
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

class HistogramChild implements HistogramSeries {
  /** Observations per bucket (not cumulative), the last one past every bound. */
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length + 1);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]!) i++;
    this.counts[i]! += 1;
    this.sum += value;
    this.count += 1;
  }
}

/** A histogram with pre-resolved series, registered on `registry` (none: metrics are off). */
export class LabeledHistogram<L extends string> extends LabeledSeries<L, HistogramSeries> {
  readonly type = "histogram";
  protected readonly ignored: HistogramSeries = { observe: () => {} };
  private readonly bounds: readonly number[];

  constructor(registry: MetricsRegistry | undefined, options: HistogramOptions<L>) {
    super(registry, options.name, options.help, options.labelNames);
    this.bounds = [...options.buckets].sort((a, b) => a - b);
  }

  protected create(): HistogramSeries {
    return new HistogramChild(this.bounds);
  }

  async get() {
    const values: ExportedValue[] = [];
    for (const { labels, series } of this.children.values()) {
      const child = series as HistogramChild;
      let cumulative = 0;
      this.bounds.forEach((bound, i) => {
        cumulative += child.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: String(bound) }, value: cumulative });
      });
      values.push({ metricName: `${this.name}_bucket`, labels: { ...labels, le: "+Inf" }, value: child.count });
      values.push({ metricName: `${this.name}_sum`, labels, value: child.sum });
      values.push({ metricName: `${this.name}_count`, labels, value: child.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

/**
 * The series of one label set per status code (`labels` plus `status`): a lookup in a small map per observation,
 * the status's label string made once.
 */
export function seriesByStatus<L extends string>(
  histogram: LabeledHistogram<L | "status">,
  labels: Labels<Exclude<L, "status">>,
): (status: number) => HistogramSeries {
  const byStatus = new Map<number, HistogramSeries>();
  return (status) => {
    let series = byStatus.get(status);
    if (!series) byStatus.set(status, (series = histogram.series({ ...labels, status: String(status) } as Labels<L | "status">)));
    return series;
  };
}

/** Per registry, the one metric of a name: a second user of the registry (another serve call) gets the same. */
export function oncePerRegistry<M>(make: (registry: MetricsRegistry | undefined) => M): (registry: MetricsRegistry | undefined) => M {
  const made = new WeakMap<MetricsRegistry, M>();
  let withoutRegistry: M | undefined;
  return (registry) => {
    if (!registry) return (withoutRegistry ??= make(undefined));
    let metric = made.get(registry);
    if (!metric) made.set(registry, (metric = make(registry)));
    return metric;
  };
}
