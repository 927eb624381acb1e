/**
 * `@corral/gateway/testing`: for tests and benchmarks only (a process starts the gateway with `startGateway`). The
 * router and the routes it is given, the security and tenant lookups a test system wires in, request telemetry, and
 * the event streams' memory of recent events.
 */
export { createRouter, pathSegments } from "./router.js";
export type { RoutePattern, RouteMatch } from "./router.js";
export { apiRoutes } from "./routes.js";
export type { Route, GatewayRoute, ServiceRoute } from "./routes.js";
export { openGatewaySecurity } from "./security.js";
export type { GatewaySecurity, TenantUids } from "./security.js";
export { openTenantDirectory } from "./tenant-directory.js";
export { resolveIdentity } from "./identity.js";
export { createRequestTelemetry } from "./request-telemetry.js";
export { StreamedEvent } from "./events/live-event.js";
export { RecentEvents } from "./events/recent-events.js";
