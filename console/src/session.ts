/** Who the console acts as: identity headers, or a Bearer token when security is on. Kept in sessionStorage. */
export interface Session {
  userId: string;
  tenant: string;
  /** A Bearer token from the token server (`security.enabled`); absent: identity headers alone. */
  token?: string;
  /** The role the token server named at a single sign-on; absent: inferred from the user name, as the API does without tokens. */
  role?: SessionRole;
}

export type SessionRole = "user" | "admin" | "superadmin";

const KEY = "corral.session";
const ROLES: readonly string[] = ["user", "admin", "superadmin"] satisfies SessionRole[];

export const isSessionRole = (value: unknown): value is SessionRole => typeof value === "string" && ROLES.includes(value);

export function currentSession(): Session | undefined {
  const raw = sessionStorage.getItem(KEY);
  if (!raw) return undefined;
  try {
    const value = JSON.parse(raw) as Partial<Session>;
    if (typeof value.userId !== "string" || typeof value.tenant !== "string") return undefined;
    return {
      userId: value.userId,
      tenant: value.tenant,
      ...(typeof value.token === "string" ? { token: value.token } : {}),
      ...(isSessionRole(value.role) ? { role: value.role } : {}),
    };
  } catch {
    return undefined;
  }
}

export function signIn(session: Session): void {
  sessionStorage.setItem(KEY, JSON.stringify(session));
}

export function signOut(): void {
  sessionStorage.removeItem(KEY);
}

/** The headers every API call carries. */
export function identityHeaders(session: Session): Record<string, string> {
  const headers: Record<string, string> = { "Service-UserID": session.userId, "Service-TenantID": session.tenant };
  if (session.token) headers["Authorization"] = `Bearer ${session.token}`;
  return headers;
}

/** The superadmin sees the superadmin pages (tenants, provisioners, workers). */
export const isSuperadmin = (session: Session) =>
  session.role ? session.role === "superadmin" : session.tenant === "superadmin" && session.userId === "admin";
export const isTenantAdmin = (session: Session) => (session.role ? session.role !== "user" : session.userId === "admin");
