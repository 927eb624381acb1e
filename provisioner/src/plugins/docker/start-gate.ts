/**
 * At most `limit` container starts at once on one Docker host; the others wait their turn, in order. Fifty starts
 * at once made a 50-node cluster's CREATE stage about a fifth slower than sixteen at a time on a 2-core host
 * (bench/results/providers-docker-start-limit.json): dockerd, containerd and the kernel's network setup share the
 * cores with the containers already booting.
 */
export class StartGate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(readonly limit: number) {}

  async run<T>(fn: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    if (this.running >= this.limit) await this.turn(signal);
    this.running++;
    try {
      return await fn();
    } finally {
      this.running--;
      this.waiting.shift()?.();
    }
  }

  private turn(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    return new Promise<void>((resolve, reject) => {
      const go = () => {
        signal?.removeEventListener("abort", onAbort);
        resolve();
      };
      const onAbort = () => {
        const at = this.waiting.indexOf(go);
        if (at >= 0) this.waiting.splice(at, 1);
        reject(signal!.reason);
      };
      this.waiting.push(go);
      signal?.addEventListener("abort", onAbort, { once: true });
    });
  }
}
