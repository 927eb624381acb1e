import * as client from "openid-client";
import type { Logger } from "@corral/shared";
import { isLoopbackUrl, type OidcSettings } from "./settings.js";

/**
 * The identity provider as openid-client knows it: its metadata, discovered at the first use rather than at start
 * (a provider that is down must not stop the token server or a gateway), and again after a failed discovery.
 */
export interface OidcProvider {
  /** The client configuration; rejects with {@link ProviderUnavailableError} while the provider cannot be reached. */
  configuration(): Promise<client.Configuration>;
}

/** The provider's metadata could not be read (503 for the caller). */
export class ProviderUnavailableError extends Error {}

/** Seconds a request to the provider may take. */
const PROVIDER_TIMEOUT_SECONDS = 10;
/** Least time between two failed discoveries, so a down provider is not asked on every request. */
const RETRY_AFTER_FAILURE_MS = 2_000;

export function oidcProvider(settings: OidcSettings, log: Logger, clock: () => number = Date.now): OidcProvider {
  let discovered: Promise<client.Configuration> | undefined;
  let failedAt = -Infinity;
  let lastFailure = "";
  // A secret means a confidential client (client_secret_post by default); none, a public client that relies on PKCE.
  const clientAuth = settings.clientSecret ? undefined : client.None();
  const discover = async (): Promise<client.Configuration> => {
    try {
      return await client.discovery(settings.issuer, settings.clientId, settings.clientSecret || undefined, clientAuth, {
        timeout: PROVIDER_TIMEOUT_SECONDS,
        ...(isLoopbackUrl(settings.issuer) ? { execute: [client.allowInsecureRequests] } : {}),
      });
    } catch (err) {
      failedAt = clock();
      lastFailure = (err as Error).message;
      log.warn("the OpenID Connect provider's metadata cannot be read", { issuer: settings.issuer.href, err });
      discovered = undefined;
      throw new ProviderUnavailableError(`the identity provider ${settings.issuer.href} cannot be reached: ${lastFailure}`);
    }
  };
  return {
    configuration() {
      if (!discovered && clock() - failedAt < RETRY_AFTER_FAILURE_MS) {
        return Promise.reject(new ProviderUnavailableError(`the identity provider ${settings.issuer.href} cannot be reached: ${lastFailure}`));
      }
      discovered ??= discover();
      return discovered;
    },
  };
}
