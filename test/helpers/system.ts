import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import { connectNats, silentLogger } from "@corral/shared";
import { startGateway, type Gateway } from "@corral/gateway";
import { startTenancyService, type TenancyService } from "@corral/tenancy";

export interface SystemOptions {
  /** Instances of each service to run side by side. @default 1 */
  gateways?: number;
  tenancies?: number;
  /** Gateway request body limit. */
  maxRequestBytes?: number;
  /** How long gateways wait for a service before answering 504. */
  requestTimeoutMs?: number;
}

/** A running Corral: its own nats-server (JetStream), services in-process, gateways on free ports. */
export interface TestSystem {
  nats: NatsHandle;
  /** A connection for the test's own use (writing registries, reading KV). */
  nc: NatsConnection;
  /** Base URLs including the version segment, one per gateway. */
  baseUrls: string[];
  baseUrl: string;
  stop(): Promise<void>;
}

export async function startSystem(options: SystemOptions = {}): Promise<TestSystem> {
  const nats = await startNats({ jetstream: true, syncAlways: false });
  const connections: NatsConnection[] = [];
  const open = async (name: string) => {
    const nc = await connectNats({ url: nats.url, name });
    connections.push(nc);
    return nc;
  };
  const tenancies: TenancyService[] = [];
  for (let i = 0; i < (options.tenancies ?? 1); i++) {
    tenancies.push(await startTenancyService({ nc: await open(`tenancy-${i}`), log: silentLogger }));
  }
  const gateways: Gateway[] = [];
  for (let i = 0; i < (options.gateways ?? 1); i++) {
    gateways.push(
      await startGateway({
        nc: await open(`gateway-${i}`),
        log: silentLogger,
        host: "127.0.0.1",
        port: 0,
        maxRequestBytes: options.maxRequestBytes,
        requestTimeoutMs: options.requestTimeoutMs,
      }),
    );
  }
  const nc = await open("test");
  const baseUrls = gateways.map((g) => `http://127.0.0.1:${g.port}/v2`);
  let stopping: Promise<void> | undefined;
  return {
    nats,
    nc,
    baseUrls,
    baseUrl: baseUrls[0] ?? "",
    stop() {
      stopping ??= (async () => {
        await Promise.all(gateways.map((g) => g.stop()));
        await Promise.all(tenancies.map((t) => t.stop()));
        await Promise.all(connections.map((c) => c.drain().catch(() => {})));
        await nats.stop();
      })();
      return stopping;
    },
  };
}
