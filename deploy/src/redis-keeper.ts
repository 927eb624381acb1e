import { setTimeout as sleep } from "node:timers/promises";
import { startRedis, type RedisOptions, type ServerHandle } from "./servers.js";

/** The embedded redis-server as the launcher holds it: `handle` is replaced by each restart. */
export interface KeptServer {
  name: string;
  handle: ServerHandle;
}

const FIRST_RETRY_MS = 1_000;
const LAST_RETRY_MS = 30_000;

/**
 * Starts the embedded redis-server again, on the same port and data directory, each time it dies while the
 * launcher is not stopping, instead of stopping everything: services reconnect by themselves and only what needs
 * Redis pauses (docs/operations.md, Redis down or restarted). A start that fails is retried after 1 s, doubling to 30 s.
 * `options` must name the port the server got, so every client's URL stays valid.
 */
export function keepRedisRunning(
  server: KeptServer,
  options: RedisOptions & { port: number },
  notice: (msg: string) => void,
  stopping: () => boolean,
): void {
  const watch = (handle: ServerHandle): void => {
    void handle.exited.then(async () => {
      if (stopping()) return;
      notice(`${server.name} (pid ${handle.pid}) died; starting it again on port ${options.port}`);
      for (let delay = FIRST_RETRY_MS; !stopping(); delay = Math.min(delay * 2, LAST_RETRY_MS)) {
        try {
          const restarted = await startRedis(options);
          server.handle = restarted;
          if (stopping()) {
            await restarted.stop();
            return;
          }
          notice(`${server.name} restarted (pid ${restarted.pid})`);
          watch(restarted);
          return;
        } catch (err) {
          notice(`starting ${server.name} again failed (${(err as Error).message}); next try in ${delay / 1000} s`);
          await sleep(delay);
        }
      }
    });
  };
  watch(server.handle);
}
