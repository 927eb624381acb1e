/**
 * When a failed delivery is tried again: the first retries within seconds, then minutes, about two hours in all.
 * Past the last, the delivery has failed and its endpoint is disabled.
 */
export const DEFAULT_RETRY_DELAYS_MS: readonly number[] = [2_000, 10_000, 60_000, 5 * 60_000, 15 * 60_000, 30 * 60_000, 60 * 60_000];

/** The delay before attempt `attempts + 1` after `attempts` failed ones; undefined when none is left. */
export function retryDelayAfter(attempts: number, delays: readonly number[]): number | undefined {
  return delays[attempts - 1];
}

/** The delays of a `webhooks.retryDelaysMs` value: milliseconds, comma separated. */
export function parseRetryDelays(setting: string): number[] {
  const delays = setting.split(/[\s,]+/).filter((d) => d !== "").map(Number);
  if (delays.some((d) => !Number.isInteger(d) || d < 0)) throw new Error(`webhooks.retryDelaysMs: ${JSON.stringify(setting)} is no list of milliseconds`);
  return delays;
}
