/** Summaries of a benchmark's samples. */

const roundTo = (x: number, digits: number) => Math.round(x * 10 ** digits) / 10 ** digits;

/** The middle sample (the upper one of an even count); NaN when there is none. */
export function median(samples: readonly number[]): number {
  return [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)] ?? Number.NaN;
}

/** `p`-th percentile of ascending `sorted`. */
export const percentile = (sorted: readonly number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;

/** p50/p90/p99/max/mean of unsorted samples, ms, rounded to 0.1. */
export function latencySummary(samples: readonly number[]): { p50: number; p90: number; p99: number; max: number; mean: number } {
  const s = [...samples].sort((a, b) => a - b);
  const mean = s.reduce((a, b) => a + b, 0) / Math.max(1, s.length);
  return {
    p50: roundTo(percentile(s, 50), 1),
    p90: roundTo(percentile(s, 90), 1),
    p99: roundTo(percentile(s, 99), 1),
    max: roundTo(s.at(-1) ?? 0, 1),
    mean: roundTo(mean, 1),
  };
}
