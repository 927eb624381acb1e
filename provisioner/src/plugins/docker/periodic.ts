/** A background job run on a timer. */
export interface Periodic {
  /** Stops the timer and waits for a run in progress. */
  stop(): Promise<void>;
}

/**
 * Runs `run` every `intervalMs` (never two at once; a run still going when the next is due makes that one be
 * skipped). The timer does not keep the process alive. `run` must not throw.
 */
export function every(intervalMs: number, run: () => Promise<void>): Periodic {
  let running: Promise<void> | undefined;
  const timer = setInterval(() => {
    running ??= run().finally(() => (running = undefined));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}
