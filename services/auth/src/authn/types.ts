/**
 * The contract of an authentication backend (built-in or custom). A custom handler module exports a factory
 * (default export or named `createHandler`) that receives the `security.authentication.handler.*` properties
 * with the prefix removed and returns this:
 *
 * ```js
 * export default function createHandler(properties, context) {
 *   return {
 *     async authenticate(user, password) {
 *       return user === "ci" && password === properties.ciPassword ? { roles: ["admin"] } : null;
 *     },
 *   };
 * }
 * ```
 */
export interface AuthenticationHandler {
  /**
   * Checks a user name and password. Resolves `{roles}` for valid credentials, `null` for invalid ones.
   * Throw (reject) only when the backend cannot answer (the token server then answers 503, and the attempt
   * does not count as a failed login).
   */
  authenticate(user: string, password: string): Promise<AuthenticatedUser | null>;
  /** Releases connections or watchers. Optional. */
  close?(): Promise<void> | void;
}

export interface AuthenticatedUser {
  roles: string[];
}

/** What a handler factory gets besides its properties. */
export interface HandlerContext {
  /** Logs through the service's logger (structured fields, never passwords). */
  log: (message: string, fields?: Record<string, unknown>) => void;
}

/** The shape a custom handler module's factory must have. */
export type HandlerFactory = (
  properties: Readonly<Record<string, string>>,
  context: HandlerContext,
) => AuthenticationHandler | Promise<AuthenticationHandler>;
