/** What the gateway answers itself, without a service. */
import { gatewayEndpoint, route } from "./endpoint.js";
import { objectOf, oneOfValues } from "./json-schema.js";

export const gatewayEndpoints = {
  /** Liveness: public, also at `/status` outside the version segment. */
  "gateway.status": gatewayEndpoint<{ status: "OK" }>({
    routes: [route("GET", "/status")],
    reply: objectOf({ status: oneOfValues(["OK"]) }),
  }),
};
