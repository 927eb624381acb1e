import type { NatsConnection } from "@nats-io/transport-node";
import { generateBusCredentials, natsUsers, prepareBus, startNats, type BusCredentials, type CorralService, type NatsHandle } from "@corral/deploy";
import { inboxPrefixOf, PROVISIONER_INBOX_PREFIX, withUrlCredentials } from "@corral/contracts";
import {
  connectNats,
  createMetricsRegistry,
  loadConfig,
  silentLogger,
  startMetricsServer,
  type CorralConfig,
  type Logger,
  type MetricsRegistry,
  type MetricsServer,
} from "@corral/shared";
import { startGateway, type Gateway } from "@corral/gateway";
import { startTenancyService, type TenancyService } from "@corral/tenancy";
import { startClustersService, type ClustersService } from "@corral/clusters";
import { startPluginsService, type PluginsService } from "@corral/plugins";
import { startProvisioner, type RunningProvisioner } from "@corral/provisioner";
import { startAuthService, type AuthService } from "@corral/auth";
import { readOidcSettings } from "@corral/auth/internal";
import { startMetricsService, type MetricsService } from "@corral/metrics";
import { startSolverService, type SolverService } from "@corral/solver/service";
import { startWebhooksService, type WebhooksService } from "@corral/webhooks";
import { openGatewaySecurity, type GatewaySecurity } from "@corral/gateway/testing";
import { startRedis, type ServerHandle } from "./servers.js";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** Security for {@link startSystem}: a redis-server, the token server, and Bearer checks in every gateway. */
export interface SystemSecurityOptions {
  /**
   * Configuration of the token server (keys of `shared/src/config.ts`, e.g. the realm file or LDAP handler
   * properties). `security.enabled`, `redis.url`, address 127.0.0.1 and a free port are set already.
   */
  config?: Record<string, string | number | boolean>;
  /** Start the auth service (token server). @default true */
  authService?: boolean;
  /** Clock of the token server (issue times). @default Date.now */
  authClock?: () => number;
  /** Clock of the gateways' token checks. @default Date.now */
  gatewayClock?: () => number;
}

export interface SystemOptions {
  /**
   * nats-server and redis-server require credentials as under `npm start`: each service logs in as its own user,
   * in-process provisioners as the provisioner user, each allowed only what it uses; the test's own connection
   * (`nc`, `nats.url`) is the admin user. @default true
   */
  credentials?: boolean;
  /** Turn `security.enabled` on: every gateway request needs a Bearer token. @default off */
  security?: SystemSecurityOptions;
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
  /** The provisioners also carry provider type `sim-secured` (a required password field). @default false */
  simSecured?: boolean;
  /** Between two rounds of the provisioners' node health checks (ms). @default 30000, as configured */
  healthIntervalMs?: number;
  /** Reconcile interval of the clusters service (ms). */
  reconcileIntervalMs?: number;
  /** Instances of the plugins service (tenant bootstrap calls it, so it is on by default). @default 1 */
  plugins?: number;
  /** Instances of the metrics service; any starts a redis-server (shared with `security`). @default 0 */
  metrics?: number;
  /** Clock of the metrics services (ms; node usage counts open nodes until it). @default Date.now */
  metricsNow?: () => number;
  /** Instances of the webhooks service; deliveries may reach 127.0.0.1 (`webhooks.allowedNetworks`). @default 0 */
  webhooks?: number;
  /** Instances of the solver service (dry runs ask it). @default 1 */
  solvers?: number;
  /**
   * Each service instance and provisioner gets a metrics registry of its own, served on a free loopback port as a
   * process of its own would serve it (`TestSystem.metricsUrls`). @default off
   */
  prometheus?: boolean;
  /** Receives every line nats-server prints (permission violations among them). @default none */
  natsLog?: (line: string) => void;
  /** The logger of each instance, by its name (`gateway-0`, `tenancy-0`, `clusters-0`, `auth`, ...). @default silent */
  logger?: (instance: string) => Logger;
}

/** A running Corral: its own nats-server (JetStream), services in-process, gateways on free ports. */
export interface TestSystem {
  /** The nats-server; `url` carries the admin user's credentials (when `credentials` is on). */
  nats: NatsHandle;
  /** URL a provisioner connects with (the provisioner user's credentials; `nats.url` without `credentials`). */
  provisionerNatsUrl: string;
  /** The generated credentials (when `credentials` is on). */
  credentials?: BusCredentials;
  /** A connection for the test's own use (writing registries, reading KV). */
  nc: NatsConnection;
  /** Base URLs including the version segment, one per gateway. */
  baseUrls: string[];
  baseUrl: string;
  clusterServices: ClustersService[];
  provisioners: RunningProvisioner[];
  /** With `security`: the redis-server, the token server, its `/token` URL and the configuration used. */
  redis?: ServerHandle;
  auth?: AuthService;
  tokenUrl?: string;
  securityConfig?: CorralConfig;
  /** Work directory of the in-process provisioners. */
  workDir: string;
  /** With `prometheus`: each instance's `/metrics` URL, by its name (`gateway-0`, `provisioner-0`, `auth`, ...). */
  metricsUrls: Record<string, string>;
  stop(): Promise<void>;
}

export async function startSystem(options: SystemOptions = {}): Promise<TestSystem> {
  const credentials = (options.credentials ?? true) ? generateBusCredentials() : undefined;
  const server = await startNats({
    jetstream: true,
    syncAlways: false,
    ...(credentials ? { users: natsUsers(credentials) } : {}),
    ...(options.natsLog ? { onLine: options.natsLog } : {}),
  });
  const nats: NatsHandle = { ...server, url: credentials ? withUrlCredentials(server.url, credentials.admin) : server.url };
  const provisionerNatsUrl = credentials ? withUrlCredentials(server.url, credentials.provisioner) : server.url;
  const connections: NatsConnection[] = [];
  const metricsServers: MetricsServer[] = [];
  const metricsUrls: Record<string, string> = {};
  /** An instance's logger and, with `prometheus`, its metrics registry and server. */
  const observed = async (instance: string): Promise<{ log: Logger; metrics?: MetricsRegistry }> => {
    const log = options.logger?.(instance) ?? silentLogger;
    if (!options.prometheus) return { log };
    const metrics = createMetricsRegistry();
    const server = await startMetricsServer({ registry: metrics, port: 0, log });
    metricsServers.push(server);
    metricsUrls[instance] = server.url;
    return { log, metrics };
  };
  /** A connection of the test (admin), or of an instance of `service` as that service's user. */
  const open = async (name: string, service?: CorralService) => {
    const login = service && credentials?.services[service];
    const url = login ? withUrlCredentials(server.url, login) : nats.url;
    const nc = await connectNats({ url, name, ...(service ? { inboxPrefix: inboxPrefixOf(service) } : {}) });
    connections.push(nc);
    return nc;
  };
  const openAsProvisioner = async (name: string) => {
    const nc = await connectNats({ url: provisionerNatsUrl, name, inboxPrefix: PROVISIONER_INBOX_PREFIX });
    connections.push(nc);
    return nc;
  };
  // As the launcher does, every stream, bucket and store exists before a service or provisioner connects.
  await prepareBus(await open("prepare"));
  const tenancies: TenancyService[] = [];
  for (let i = 0; i < (options.tenancies ?? 1); i++) {
    tenancies.push(await startTenancyService({ nc: await open(`tenancy-${i}`, "tenancy"), ...(await observed(`tenancy-${i}`)) }));
  }
  const pluginServices: PluginsService[] = [];
  for (let i = 0; i < (options.plugins ?? 1); i++) {
    pluginServices.push(await startPluginsService({ nc: await open(`plugins-${i}`, "plugins"), ...(await observed(`plugins-${i}`)) }));
  }
  let redis: ServerHandle | undefined;
  let auth: AuthService | undefined;
  let securityConfig: CorralConfig | undefined;
  const securities: GatewaySecurity[] = [];
  const redisPassword = credentials ? { password: credentials.redisPassword } : {};
  if (options.security) {
    redis = await startRedis(redisPassword);
    securityConfig = loadConfig({
      overrides: {
        "security.enabled": true,
        "redis.url": redis.url,
        "security.auth.server.address": "127.0.0.1",
        "security.auth.server.bind.port": 0,
        ...options.security.config,
      },
    });
    if (options.security.authService ?? true) {
      auth = await startAuthService({
        nc: await open("auth", "auth"),
        ...(await observed("auth")),
        config: securityConfig,
        ...(options.security.authClock ? { clock: options.security.authClock } : {}),
      });
    }
  }
  const metricsServices: MetricsService[] = [];
  if ((options.metrics ?? 0) > 0) {
    redis ??= await startRedis(redisPassword);
    for (let i = 0; i < (options.metrics ?? 0); i++) {
      metricsServices.push(
        await startMetricsService({
          nc: await open(`metrics-${i}`, "metrics"),
          redis: redis.url,
          ...(await observed(`metrics-${i}`)),
          ...(options.metricsNow ? { now: options.metricsNow } : {}),
        }),
      );
    }
  }
  const webhooksServices: WebhooksService[] = [];
  for (let i = 0; i < (options.webhooks ?? 0); i++) {
    webhooksServices.push(
      await startWebhooksService({ nc: await open(`webhooks-${i}`, "webhooks"), ...(await observed(`webhooks-${i}`)), allowedNetworks: ["127.0.0.1/32"] }),
    );
  }
  const tokenUrl = auth?.tokenUrl ?? (securityConfig ? "http://127.0.0.1:55059/token" : undefined);
  const gateways: Gateway[] = [];
  for (let i = 0; i < (options.gateways ?? 1); i++) {
    gateways.push(
      await startGateway({
        nc: await open(`gateway-${i}`, "gateway"),
        ...(await observed(`gateway-${i}`)),
        security:
          securityConfig && redis
            ? await (async () => {
                const security = await openGatewaySecurity({
                  nc: await open(`gateway-security-${i}`, "gateway"),
                  log: silentLogger,
                  redisUrl: redis.url,
                  tokenUrl: tokenUrl!,
                  oidc: readOidcSettings(securityConfig),
                  ...(options.security?.gatewayClock ? { clock: options.security.gatewayClock } : {}),
                });
                securities.push(security);
                return security;
              })()
            : undefined,
        host: "127.0.0.1",
        port: 0,
        maxRequestBytes: options.maxRequestBytes,
        requestTimeoutMs: options.requestTimeoutMs,
      }),
    );
  }
  const solvers: SolverService[] = [];
  for (let i = 0; i < (options.solvers ?? 1); i++) {
    solvers.push(await startSolverService({ nc: await open(`solver-${i}`, "solver"), ...(await observed(`solver-${i}`)) }));
  }
  const clusterServices: ClustersService[] = [];
  for (let i = 0; i < (options.clusters ?? 0); i++) {
    clusterServices.push(
      await startClustersService({
        nc: await open(`clusters-${i}`, "clusters"),
        ...(await observed(`clusters-${i}`)),
        ...(options.reconcileIntervalMs !== undefined ? { reconcileIntervalMs: options.reconcileIntervalMs } : {}),
      }),
    );
  }
  const workDir = await mkdtemp(join(tmpdir(), "corral-work-"));
  const provisioners: RunningProvisioner[] = [];
  for (let i = 0; i < (options.provisioners ?? 0); i++) {
    provisioners.push(
      await startProvisioner({
        nc: await openAsProvisioner(`provisioner-${i}`),
        ...(await observed(`provisioner-${i}`)),
        id: `test-p${i}`,
        capacity: 20,
        workDir,
        simSecured: options.simSecured ?? false,
        ...(options.healthIntervalMs !== undefined ? { healthIntervalMs: options.healthIntervalMs } : {}),
      }),
    );
  }
  const nc = await open("test");
  const baseUrls = gateways.map((g) => `http://127.0.0.1:${g.port}/v2`);
  let stopping: Promise<void> | undefined;
  return {
    nats,
    provisionerNatsUrl,
    ...(credentials ? { credentials } : {}),
    nc,
    baseUrls,
    baseUrl: baseUrls[0] ?? "",
    clusterServices,
    provisioners,
    workDir,
    metricsUrls,
    ...(redis ? { redis } : {}),
    ...(auth ? { auth } : {}),
    ...(tokenUrl ? { tokenUrl } : {}),
    ...(securityConfig ? { securityConfig } : {}),
    stop() {
      stopping ??= (async () => {
        await Promise.all(gateways.map((g) => g.stop()));
        await Promise.all(securities.map((s) => s.stop()));
        await auth?.stop();
        await Promise.all(provisioners.map((p) => p.stop()));
        await Promise.all(clusterServices.map((c) => c.stop()));
        await Promise.all(solvers.map((s) => s.stop()));
        await Promise.all(pluginServices.map((p) => p.stop()));
        await Promise.all(metricsServices.map((m) => m.stop()));
        await Promise.all(webhooksServices.map((w) => w.stop()));
        await Promise.all(tenancies.map((t) => t.stop()));
        await Promise.all(metricsServers.map((s) => s.stop()));
        await Promise.all(connections.map((c) => c.drain().catch(() => {})));
        await nats.stop();
        await redis?.stop();
        await rm(workDir, { recursive: true, force: true });
      })();
      return stopping;
    },
  };
}
