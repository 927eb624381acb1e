/**
 * For sibling services only (the gateway): local token verification and the role mapping. Not the public
 * surface of `@corral/auth`, which is `startAuthService`.
 */
export { openTokenVerifier } from "./verifier.js";
export type { TokenVerifier, TokenVerifierOptions } from "./verifier.js";
export { roleFromToken } from "./domain/roles.js";
export { tokenServerUrl } from "./config.js";
export { readOidcSettings, signInDetails } from "./oidc/settings.js";
export type { OidcSettings, SignInDetails } from "./oidc/settings.js";
export type { TokenCheck, TokenClaims } from "./domain/token.js";
export { bindingProblem, tenantUidOf } from "./domain/tenant-binding.js";
export type { TenantBinding } from "./domain/tenant-binding.js";
