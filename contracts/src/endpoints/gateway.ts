/** What the gateway answers itself, without a service. */
import type { ClusterStreamEvent, EventSocketMessage, EventSocketRequest } from "../cluster-events.js";
import { gatewayEndpoint, gatewayStream, route } from "./endpoint.js";
import { clusterEventSchema, eventSocketMessageSchema, eventSocketRequestSchema } from "./event-schemas.js";
import { objectOf, oneOfValues, typedSchema } from "./json-schema.js";

export const gatewayEndpoints = {
  /** Liveness: public, also at `/status` outside the version segment. */
  "gateway.status": gatewayEndpoint({
    routes: [route("GET", "/status")],
    reply: objectOf({ status: oneOfValues(["OK"]) }),
  }),
  /** A cluster's events as Server-Sent Events (docs/api.md, Live events); `reply` is one event's `data`. */
  "gateway.clusterEvents": gatewayStream({
    protocol: "sse",
    route: route("GET", "/clusters/:id/events"),
    access: "user",
    reply: typedSchema<ClusterStreamEvent>(clusterEventSchema),
  }),
  /** A WebSocket taking subscriptions to clusters, or to the whole tenant for its admin. */
  "gateway.events": gatewayStream({
    protocol: "websocket",
    route: route("GET", "/events"),
    access: "user",
    request: typedSchema<EventSocketRequest>(eventSocketRequestSchema),
    reply: typedSchema<EventSocketMessage>(eventSocketMessageSchema),
  }),
};
