/** Who is calling, as established by the gateway. */
export interface Identity {
  userId: string;
  tenant: string;
  /** `superadmin` is user admin of tenant superadmin; `admin` is user admin of any other tenant. */
  role: "superadmin" | "admin" | "user";
}

/** The envelope the gateway sends to a service for one REST call. */
export interface ApiRequest<B = unknown> {
  identity: Identity;
  params: Record<string, string>;
  query: Record<string, string>;
  body?: B;
  /** For upload routes: the raw body, already streamed into the uploads object store; the service owns it. */
  upload?: { object: string; size: number };
}
