import type { NatsConnection } from "@nats-io/transport-node";
import { startNats, type NatsHandle } from "@corral/deploy";
import { connectNats, silentLogger } from "@corral/shared";
import { startGateway, type Gateway } from "@corral/gateway";
import { startTenancyService, type TenancyService } from "@corral/tenancy";
import { startClustersService, type ClustersService } from "@corral/clusters";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface SystemOptions {
  /** Instances of each service to run side by side. @default 1 */
  gateways?: number;
  tenancies?: number;
  /** Gateway request body limit. */
  maxRequestBytes?: number;
  /** How long gateways wait for a service before answering 504. */
  requestTimeoutMs?: number;
  /** Instances of the clusters service. @default 0 */
  clusters?: number;
  /** In-process provisioners (capacity 20 each, bundled plugins). @default 0 */
  provisioners?: number;
  /** Reconcile interval of the clusters service (ms). */
  reconcileIntervalMs?: number;
}

/** A running Corral: its own nats-server (JetStream), services in-process, gateways on free ports. */
export interface TestSystem {
  nats: NatsHandle;
  /** A connection for the test's own use (writing registries, reading KV). */
  nc: NatsConnection;
  /** Base URLs including the version segment, one per gateway. */
  baseUrls: string[];
  baseUrl: string;
  clusterServices: ClustersService[];
  provisioners: RunningProvisioner[];
  /** Work directory of the in-process provisioners. */
  workDir: string;
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
  const clusterServices: ClustersService[] = [];
  for (let i = 0; i < (options.clusters ?? 0); i++) {
    clusterServices.push(
      await startClustersService({
        nc: await open(`clusters-${i}`),
        log: silentLogger,
        ...(options.reconcileIntervalMs !== undefined ? { reconcileIntervalMs: options.reconcileIntervalMs } : {}),
      }),
    );
  }
  const workDir = await mkdtemp(join(tmpdir(), "corral-work-"));
  const provisioners: RunningProvisioner[] = [];
  for (let i = 0; i < (options.provisioners ?? 0); i++) {
    provisioners.push(
      await startProvisioner({ nc: await open(`provisioner-${i}`), log: silentLogger, id: `test-p${i}`, capacity: 20, workDir }),
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
    clusterServices,
    provisioners,
    workDir,
    stop() {
      stopping ??= (async () => {
        await Promise.all(gateways.map((g) => g.stop()));
        await Promise.all(provisioners.map((p) => p.stop()));
        await Promise.all(clusterServices.map((c) => c.stop()));
        await Promise.all(tenancies.map((t) => t.stop()));
        await Promise.all(connections.map((c) => c.drain().catch(() => {})));
        await nats.stop();
        await rm(workDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
