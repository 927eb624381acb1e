/** Who is calling, as established by the gateway. */
export interface Identity {
  userId: string;
  tenant: string;
  /** `superadmin` is user admin of tenant superadmin; `admin` is user admin of any other tenant. */
  role: "superadmin" | "admin" | "user";
}

/** Query parameters as text, by name (`?a=1&b=x`: `{a: "1", b: "x"}`; a repeated name keeps its last value). */
export type QueryText = Readonly<Record<string, string | undefined>>;

/** The envelope the gateway sends to a service for one REST call. */
export interface ApiRequest<B = unknown, Q extends QueryText = QueryText> {
  identity: Identity;
  params: Record<string, string>;
  /** The query parameters the endpoint declares (RestBinding.query); the gateway leaves out any other. */
  query: Q;
  body?: B;
  /** For upload routes: the raw body, already streamed into the uploads object store; the service owns it. */
  upload?: { object: string; size: number };
}
