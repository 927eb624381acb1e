export { ensureNatsServer, ensureRedisServer, ensureSlapd } from "./binaries.js";
export { startNats, startRedis } from "./servers.js";
export { ServerStartError } from "./readiness.js";
export { freePort, isPortFree } from "./ports.js";
export { defaultStateDir, repoRoot } from "./paths.js";
export type { SlapdBinaries } from "./binaries.js";
export type { CommonServerOptions, NatsHandle, NatsOptions, RedisOptions, ServerHandle } from "./servers.js";
