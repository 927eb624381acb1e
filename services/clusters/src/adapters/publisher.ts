import { headers, type NatsConnection } from "@nats-io/transport-node";
import {
  clusterEventSubject,
  encode,
  eventSubject,
  taskSubject,
  type ClusterStreamEvent,
  encodeTaskMessage,
  taskMessageId,
  type TaskMessage,
} from "@corral/contracts";
import { jsRequests, mapLimit } from "@corral/shared";
import { NODE_CHANGES, nodeChangesByTenant, type NodeEvent } from "../domain/node-events.js";
import { clusterEventMessageId, taskStartedEvents } from "../domain/stream-events.js";

export interface Publisher {
  /**
   * Publishes task dispatches, and a `task.started` event for each retry or rollback step (a first dispatch is
   * announced by its stage's `plan.stage`); a re-publish of the same dispatch is deduplicated by JetStream.
   */
  publishTasks(messages: readonly TaskMessage[]): Promise<void>;
  /**
   * Publishes node events for metrics as one message per tenant (`node.changes`), acknowledged; the same events
   * published again are dropped by their message id. Nothing for an empty list.
   */
  publishNodeEvents(events: readonly NodeEvent[]): Promise<void>;
  /**
   * Hands cluster events to the events stream without waiting for its acknowledgement, so the task path never
   * waits for them; each carries a message id derived from what caused it, so a repeat is dropped.
   */
  publishClusterEvents(events: readonly ClusterStreamEvent[]): void;
}

export function createPublisher(nc: NatsConnection): Publisher {
  const js = jsRequests(nc);
  const publishClusterEvents = (events: readonly ClusterStreamEvent[]) => {
    for (const event of events) {
      const h = headers();
      h.set("Nats-Msg-Id", clusterEventMessageId(event));
      nc.publish(clusterEventSubject(event.tenant, event.clusterId, event.type), encode(event), { headers: h });
    }
  };
  return {
    async publishTasks(messages) {
      // Before the tasks, on the same connection: a result, and its end, can then never be stored before the
      // start. Two results batches are applied at once, so a retry can run, and its result be applied, while the
      // batch that dispatched it still waits for the acknowledgements. A publish that fails leaves the dispatch
      // unpublished in its plan; the reconciler publishes it again, and its announcement is dropped by its id.
      publishClusterEvents(taskStartedEvents(messages));
      await mapLimit(messages, 256, (m) =>
        js.publish(taskSubject(m.tenant), encodeTaskMessage(m), { msgId: taskMessageId(m.taskId, m.dispatch) }),
      );
    },
    publishClusterEvents,
    async publishNodeEvents(events) {
      await Promise.all(
        nodeChangesByTenant(events).map(({ body, msgId }) => js.publish(eventSubject(body.tenant, NODE_CHANGES), encode(body), { msgId })),
      );
    },
  };
}
