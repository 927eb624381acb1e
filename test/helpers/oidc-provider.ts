/**
 * A real OpenID Connect provider for tests of single sign-on: `oidc-provider` on 127.0.0.1 with the test's
 * accounts and clients. Signing in needs no password: an authorization request with `login_hint` naming an account
 * signs that account in at once, one without shows a form asking for the account (for the browser test); consent
 * is given at once. The scope `corral` brings the claims `tenant` and `groups`, and every requested claim is in the
 * ID token. Keys can be rotated while it runs.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { exportJWK, generateKeyPair, type JWK } from "jose";
import * as client from "openid-client";
import Provider, { type ClientMetadata, type Configuration } from "oidc-provider";
import { CookieJar, visit } from "./redirects.js";

/** Claims of an account besides `sub` (its id): `preferred_username`, `tenant`, `groups`, ... */
export type AccountClaims = Record<string, unknown>;

/** A client of the provider as a test registers it. */
export interface TestClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
}

export interface TestOidcProvider {
  /** `http://127.0.0.1:<port>`. */
  issuer: string;
  /** Registers the clients (replacing any before); until then the provider answers 503. */
  setClients(clients: TestClient[]): Promise<void>;
  /** Signs with a new key from now on; the earlier keys stay published, after it. Returns the new key's id. */
  rotateKeys(): Promise<string>;
  /** The id of the key tokens are signed with now. */
  signingKeyId(): string;
  /** Lifetime of the ID tokens issued from now on. @default 3600 */
  idTokenTtlSeconds: number;
  /** Signs `account` in as `client` directly at the provider (code flow with PKCE): its ID token and access token. */
  tokensFor(client: TestClient, account: string, scope?: string): Promise<{ idToken: string; accessToken: string }>;
  stop(): Promise<void>;
}

export const TEST_SCOPES = "openid profile corral";

async function newSigningKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair("RS256", { extractable: true });
  const jwk = await exportJWK(privateKey);
  return { ...jwk, kid: `k-${Math.random().toString(36).slice(2, 10)}`, alg: "RS256", use: "sig" };
}

function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new Promise((resolve, reject) => {
    let text = "";
    req.setEncoding("utf8");
    req.on("data", (d: string) => (text += d));
    req.on("end", () => resolve(new URLSearchParams(text)));
    req.on("error", reject);
  });
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export async function startOidcProvider(accounts: Record<string, AccountClaims>): Promise<TestOidcProvider> {
  let provider: Provider | undefined;
  let clients: TestClient[] = [];
  const keys: JWK[] = [await newSigningKey()];

  const handle: TestOidcProvider = {
    issuer: "",
    idTokenTtlSeconds: 3600,
    async setClients(next) {
      clients = next;
      provider = build();
    },
    async rotateKeys() {
      keys.unshift(await newSigningKey());
      provider = build();
      return keys[0]!.kid!;
    },
    signingKeyId: () => keys[0]!.kid!,
    tokensFor: (c, account, scope = TEST_SCOPES) => tokensFor(handle.issuer, c, account, scope),
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };

  const configuration = (): Configuration => ({
    clients: clients.map((c) => ({ ...c, grant_types: ["authorization_code"], response_types: ["code"] }) satisfies ClientMetadata),
    jwks: { keys: keys.map((k) => ({ ...k })) },
    findAccount: (_ctx, id) => {
      const claims = accounts[id];
      return claims ? { accountId: id, claims: () => ({ sub: id, ...claims }) } : undefined;
    },
    claims: { openid: ["sub"], profile: ["preferred_username", "name"], corral: ["tenant", "groups"] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: false } },
    cookies: { keys: ["corral-test-provider-cookies"] },
    pkce: { required: () => true },
    ttl: { IdToken: () => handle.idTokenTtlSeconds, AccessToken: 3600, Interaction: 600, Session: 3600, Grant: 3600 },
  });
  const build = () => new Provider(handle.issuer, configuration());

  /** The test's login and consent pages: no password, consent at once. */
  const interact = async (req: IncomingMessage, res: ServerResponse, current: Provider): Promise<void> => {
    const details = await current.interactionDetails(req, res);
    if (details.prompt.name === "login") {
      const hint = req.method === "POST" ? (await readForm(req)).get("login") : details.params["login_hint"];
      if (typeof hint !== "string") {
        const page = `<!DOCTYPE html><html><body><form method="post" action="/interaction/${escapeHtml(details.uid)}"><label>Account <input name="login"></label><button type="submit">Sign in</button></form></body></html>`;
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(page);
        return;
      }
      const result = accounts[hint] ? { login: { accountId: hint } } : { error: "access_denied", error_description: `no account ${hint}` };
      return current.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
    }
    const accountId = details.session?.accountId;
    const clientId = details.params["client_id"];
    if (!accountId || typeof clientId !== "string") throw new Error(`unexpected interaction ${details.prompt.name}`);
    const grant = details.grantId ? await current.Grant.find(details.grantId) : new current.Grant({ accountId, clientId });
    if (!grant) throw new Error(`grant ${details.grantId} vanished`);
    const missing = details.prompt.details as { missingOIDCScope?: string[]; missingOIDCClaims?: string[] };
    if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(" "));
    if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
    const grantId = await grant.save();
    return current.interactionFinished(req, res, { consent: details.grantId ? {} : { grantId } }, { mergeWithLastSubmission: true });
  };

  const server = createServer((req, res) => {
    const current = provider;
    if (!current) {
      res.writeHead(503).end("no clients registered yet");
      return;
    }
    if (/^\/interaction\/[^/?]+/.test(req.url ?? "")) {
      interact(req, res, current).catch((err: unknown) => {
        if (!res.headersSent) res.writeHead(500, { "content-type": "text/plain" });
        res.end(`interaction failed: ${(err as Error).message}`);
      });
      return;
    }
    void current.callback()(req, res);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  handle.issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return handle;
}

/** The code flow run by the test itself as `c`, the browser's part by {@link visit}, stopping at the redirect. */
async function tokensFor(issuer: string, c: TestClient, account: string, scope: string): Promise<{ idToken: string; accessToken: string }> {
  const config = await client.discovery(new URL(issuer), c.client_id, c.client_secret, undefined, { execute: [client.allowInsecureRequests] });
  const redirectUri = c.redirect_uris[0]!;
  const codeVerifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const start = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(codeVerifier),
    code_challenge_method: "S256",
    nonce,
    login_hint: account,
  });
  const reached = await visit(start, { jar: new CookieJar(), stopAt: (target) => target.href.startsWith(redirectUri) });
  if (!reached.location) throw new Error(`the provider did not redirect back: ${reached.response.status} ${await reached.response.text()}`);
  const tokens = await client.authorizationCodeGrant(config, reached.location, { pkceCodeVerifier: codeVerifier, expectedNonce: nonce, idTokenExpected: true });
  return { idToken: tokens.id_token!, accessToken: tokens.access_token };
}
