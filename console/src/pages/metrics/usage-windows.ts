/**
 * Node usage over time: the node usage endpoint answers one figure per window (node-seconds between `start` and
 * `end`), so a chart of a range asks once per bucket. Pure: the buckets of a range and their labels.
 */
export interface UsageRange {
  id: string;
  label: string;
  buckets: number;
  bucketSeconds: number;
  /** The category label of a bucket starting at `date`. */
  name(date: Date): string;
}

const hhmm = (d: Date) => `${String(d.getHours()).padStart(2, "0")}:${String(d.getMinutes()).padStart(2, "0")}`;

export const USAGE_RANGES: readonly UsageRange[] = [
  { id: "hour", label: "Last hour, by 5 minutes", buckets: 12, bucketSeconds: 300, name: hhmm },
  { id: "day", label: "Last day, by hour", buckets: 24, bucketSeconds: 3_600, name: hhmm },
  { id: "week", label: "Last week, by day", buckets: 7, bucketSeconds: 86_400, name: (d) => d.toLocaleDateString(undefined, { weekday: "short", day: "numeric" }) },
];

export interface UsageBucket {
  /** Unix seconds. */
  start: number;
  end: number;
  name: string;
}

/** The range's buckets, oldest first, the last one ending at `nowSeconds`. */
export function usageBuckets(range: UsageRange, nowSeconds: number): UsageBucket[] {
  const first = nowSeconds - range.buckets * range.bucketSeconds;
  return Array.from({ length: range.buckets }, (_, i) => {
    const start = first + i * range.bucketSeconds;
    return { start, end: start + range.bucketSeconds, name: range.name(new Date(start * 1000)) };
  });
}

