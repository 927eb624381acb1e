/**
 * `@corral/webhooks/testing`: for tests only, never for other services (they use the service's requests). The
 * address policy and the signature, run without the service.
 */
export { addressPolicy, parseAllowedNetworks, urlProblem } from "./domain/address-policy.js";
export type { AddressPolicy } from "./domain/address-policy.js";
export { generateSecret, signedHeaders } from "./domain/signature.js";
export { eventOfAuditEntry, eventsOfAuditMessage, eventsOfClusterMessage, laneOf, deliveryIdOf } from "./domain/events.js";
