import type { ServiceDefinition } from "@corral/shared";
import { readOidcSettings, tokenServerUrl } from "@corral/auth/internal";
import { openGatewaySecurity } from "./security.js";
import { startGateway } from "./service.js";

/** The gateway service as a process runs it: alone (src/index.ts) or beside others (the launcher's shared process). */
export const serviceProcess: ServiceDefinition = {
  name: "gateway",
  start: async ({ nc, log, config, metrics }) => {
    const security = config.get("security.enabled")
      ? await openGatewaySecurity({
          nc,
          log,
          redisUrl: config.get("redis.url"),
          tokenUrl: tokenServerUrl(config),
          realm: config.get("security.realm"),
          oidc: readOidcSettings(config),
        })
      : undefined;
    const gateway = await startGateway({
      nc,
      log,
      security,
      metrics,
      host: config.get("server.host"),
      port: config.get("server.port"),
      maxRequestBytes: config.get("server.maxRequestBytes"),
      requestTimeoutMs: config.get("server.requestTimeoutMs"),
      maxUploadBytes: config.get("server.maxUploadBytes"),
      audit: config.get("audit.enabled"),
      events: {
        maxConnections: config.get("events.maxConnections"),
        maxBufferedBytes: config.get("events.maxBufferedBytes"),
        heartbeatMs: config.get("events.heartbeatMs"),
        maxReplayEvents: config.get("events.maxReplayEvents"),
        maxRecentEvents: config.get("events.maxRecentEvents"),
      },
    });
    log.info("gateway listening", { port: gateway.port, api: `http://localhost:${gateway.port}/v2`, security: security !== undefined });
    return {
      async stop() {
        await gateway.stop();
        await security?.stop();
      },
    };
  },
};
