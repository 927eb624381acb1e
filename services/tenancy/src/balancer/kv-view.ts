import { decode } from "@corral/contracts";
import { retryFor, type KV, type Logger } from "@corral/shared";

/** A value as last seen and the revision it was written at. */
export interface ViewEntry<T> {
  value: T;
  revision: number;
}

/**
 * An in-memory copy of a KV bucket kept by one long-lived watch: the balancer reads it every second without
 * opening a consumer per read (the pattern of adapters/catalog-mirror.ts). `caughtUp` makes a read include every
 * write acknowledged before it started.
 */
export interface KvView<T> {
  /** True once the bucket's content at the start of the watch has been loaded. */
  isReady(): boolean;
  /** Resolves when ready (or stopped). */
  ready(): Promise<void>;
  /** Live keys and their values. */
  entries(): ReadonlyMap<string, ViewEntry<T>>;
  /**
   * Waits until everything written to the bucket before the call has been applied, at most `timeoutMs`.
   * False on timeout or when not ready (the view may then be behind).
   */
  caughtUp(timeoutMs: number): Promise<boolean>;
  stop(): void;
}

export interface KvViewOptions<T> {
  log: Logger;
  /** For log lines. */
  name: string;
  /** Called for every change applied once ready: a put (`after` set), a delete (`after` undefined). */
  onChange?: (key: string, before: T | undefined, after: T | undefined) => void;
  /** Wait before re-opening a watch that ended on its own. @default 1000 */
  restartDelayMs?: number;
  /**
   * How long the first watch is tried again when it cannot be opened: on a NATS cluster a stream just created may
   * not be known yet where the request lands ("stream not found"). @default 10000
   */
  firstWatchTimeoutMs?: number;
}

interface Watch {
  stop(): void;
}

export async function openKvView<T>(kv: KV, options: KvViewOptions<T>): Promise<KvView<T>> {
  const { log, name } = options;
  let current = new Map<string, ViewEntry<T>>();
  let appliedRevision = 0;
  let ready = false;
  let stopped = false;
  let watch: Watch | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  const readyWaiters: Array<() => void> = [];
  const revisionWaiters: Array<{ revision: number; resolve: () => void }> = [];

  const becomeReady = () => {
    ready = true;
    for (const resolve of readyWaiters.splice(0)) resolve();
  };
  const releaseRevisionWaiters = () => {
    for (let i = revisionWaiters.length - 1; i >= 0; i--) {
      const w = revisionWaiters[i];
      if (w && w.revision <= appliedRevision) {
        revisionWaiters.splice(i, 1);
        w.resolve();
      }
    }
  };

  /** Opens a watch that loads into a fresh map, swapped in once loaded (so a restart never shows half a bucket). */
  const start = async (): Promise<void> => {
    const loading = new Map<string, ViewEntry<T>>();
    let loaded = false;
    let target = Number.POSITIVE_INFINITY;
    let loadedRevision = 0;
    const finishLoading = () => {
      if (loaded) return;
      loaded = true;
      current = loading;
      appliedRevision = Math.max(appliedRevision, loadedRevision);
      releaseRevisionWaiters();
      becomeReady();
    };
    const iterator = await kv.watch({ key: ">" });
    watch = iterator;
    void (async () => {
      for await (const e of iterator) {
        if (watch !== iterator) break;
        let after: T | undefined;
        if (e.operation === "PUT") {
          try {
            after = decode<T>(e.value);
          } catch (err) {
            log.warn("undecodable value ignored", { view: name, key: e.key, err });
          }
        }
        const map = loaded ? current : loading;
        const before = map.get(e.key)?.value;
        if (after === undefined) map.delete(e.key);
        else map.set(e.key, { value: after, revision: e.revision });
        loadedRevision = Math.max(loadedRevision, e.revision);
        if (loaded) {
          appliedRevision = Math.max(appliedRevision, e.revision);
          releaseRevisionWaiters();
          if (options.onChange) {
            try {
              options.onChange(e.key, before, after);
            } catch (err) {
              log.error("view change handler failed", { view: name, err });
            }
          }
        } else if (e.isUpdate || loadedRevision >= target) {
          finishLoading();
        }
      }
    })()
      .catch((err: unknown) => log.warn("view watch failed", { view: name, err }))
      .finally(() => {
        // A watch replaced or stopped on purpose ends quietly.
        if (stopped || watch !== iterator) return;
        log.warn("view watch ended, restarting", { view: name });
        scheduleRestart();
      });
    // Everything written before the watch existed is delivered first; when nothing was, it is loaded now.
    try {
      target = (await kv.status()).streamInfo.state.last_seq;
    } catch (err) {
      watch = undefined;
      iterator.stop();
      throw err;
    }
    if (loadedRevision >= target) finishLoading();
  };

  /** One pending restart at most, however many failures ask for it. */
  const scheduleRestart = () => {
    if (stopped || restartTimer !== undefined) return;
    restartTimer = setTimeout(() => {
      restartTimer = undefined;
      void restart();
    }, options.restartDelayMs ?? 1000);
    restartTimer.unref();
  };

  const restart = async (): Promise<void> => {
    if (stopped) return;
    ready = false;
    const previous = watch;
    watch = undefined;
    previous?.stop();
    try {
      await start();
    } catch (err) {
      log.warn("view watch restart failed", { view: name, err });
      scheduleRestart();
    }
  };

  await retryFor(start, {
    forMs: options.firstWatchTimeoutMs ?? 10_000,
    delayMs: 250,
    onRetry: (err) => log.warn("view watch could not be opened; retrying", { view: name, err }),
  });

  return {
    isReady: () => ready,
    ready: () => (ready || stopped ? Promise.resolve() : new Promise<void>((resolve) => readyWaiters.push(resolve))),
    entries: () => current,
    async caughtUp(timeoutMs) {
      if (!ready) return false;
      const target = (await kv.status()).streamInfo.state.last_seq;
      if (target <= appliedRevision) return true;
      let timer: NodeJS.Timeout | undefined;
      const waiter = { revision: target, resolve: () => {} };
      const caught = await new Promise<boolean>((resolve) => {
        waiter.resolve = () => resolve(true);
        revisionWaiters.push(waiter);
        timer = setTimeout(() => resolve(false), timeoutMs);
      });
      clearTimeout(timer);
      const i = revisionWaiters.indexOf(waiter);
      if (i >= 0) revisionWaiters.splice(i, 1);
      return caught && ready;
    },
    stop() {
      stopped = true;
      ready = false;
      clearTimeout(restartTimer);
      watch?.stop();
      for (const resolve of readyWaiters.splice(0)) resolve();
      for (const w of revisionWaiters.splice(0)) w.resolve();
    },
  };
}
