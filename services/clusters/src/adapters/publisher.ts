import type { NatsConnection } from "@nats-io/transport-node";
import { encode, eventSubject, taskSubject } from "@corral/contracts";
import { jsRequests, taskMessageId, type TaskMessage } from "@corral/shared";
import { mapLimit } from "./buckets.js";

/** Node lifecycle events for metrics (DESIGN.md "Events"). */
export interface NodeEvent {
  type: "node.created" | "node.deleted";
  tenant: string;
  clusterId: string;
  nodeId: string;
  ownerId: string;
  /** ms */
  time: number;
  /** The dispatch that created or deleted the machine: a machine re-created by a rollback is a new event. */
  taskId: string;
  dispatch: number;
}

export interface Publisher {
  /** Publishes task dispatches; a re-publish of the same dispatch is deduplicated by JetStream. */
  publishTasks(messages: readonly TaskMessage[]): Promise<void>;
  publishEvent(event: NodeEvent): Promise<void>;
}

export function createPublisher(nc: NatsConnection): Publisher {
  const js = jsRequests(nc);
  return {
    async publishTasks(messages) {
      await mapLimit(messages, 256, (m) =>
        js.publish(taskSubject(m.tenant), encode(m), { msgId: taskMessageId(m.taskId, m.dispatch) }),
      );
    },
    async publishEvent(event) {
      // The id makes a repeated event (after a crash) a duplicate.
      await js.publish(eventSubject(event.tenant, event.type), encode(event), {
        msgId: `${event.type}.${event.taskId}.${event.dispatch}`,
      });
    },
  };
}
