import type { Server } from "node:net";
import type { Logger } from "@corral/shared";

/** A server listening on a port other instances of the same service listen on too, or standing by for it. */
export interface SharedPort {
  /** The port: the one listened on, or the one waited for. */
  port: number;
  /** True while this server holds the port (a standby instance: false until it takes the port over). */
  listening(): boolean;
  /** Stops waiting for the port (the server itself is closed by its owner). */
  stop(): void;
}

/** How often a standby instance tries to take the port over. */
const TAKEOVER_RETRY_MS = 1000;

/**
 * Listens on `port`, which other instances of the same service may hold. Where Node can share a port between
 * processes (`reusePort`, SO_REUSEPORT: Node 22.12 and newer on Linux) every instance listens and the kernel spreads
 * connections over them. Node 20 cannot: there the port is one instance's, and the others stand by, trying again
 * every second, so one of them takes over within a second of the holder's end. A port that is taken when it was
 * asked to be any free one (0), and any failure but a taken port, reject.
 */
export async function listenOnSharedPort(server: Server, port: number, host: string, log: Logger): Promise<SharedPort> {
  const attempt = () =>
    new Promise<void>((resolve, reject) => {
      const failed = (err: Error) => reject(err);
      server.once("error", failed);
      // `reusePort` is unknown to Node 20's types and ignored by Node 20 itself.
      server.listen({ port, host, reusePort: true } as Parameters<Server["listen"]>[0], () => {
        server.off("error", failed);
        resolve();
      });
    });
  const bound = (): number | undefined => {
    const address = server.address();
    return typeof address === "object" && address ? address.port : undefined;
  };
  try {
    await attempt();
    return { port: bound() ?? port, listening: () => server.listening, stop: () => {} };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EADDRINUSE" || port === 0) throw err;
  }
  log.warn(`port ${port} is held by another instance and this Node cannot share it (reusePort needs Node 22.12+); standing by to take it over`, {
    port,
  });
  let trying = false;
  const timer = setInterval(() => {
    if (trying || server.listening) return;
    trying = true;
    attempt()
      .then(() => {
        clearInterval(timer);
        log.info(`took over port ${port}`, { port });
      })
      .catch(() => {})
      .finally(() => (trying = false));
  }, TAKEOVER_RETRY_MS);
  timer.unref();
  return { port, listening: () => server.listening, stop: () => clearInterval(timer) };
}
