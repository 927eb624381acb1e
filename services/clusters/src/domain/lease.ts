import { BadRequestError, type ClusterTemplate } from "@corral/contracts";

const leaseOf = (template: ClusterTemplate) => template.administration?.leaseduration ?? { initial: 0, max: 0, step: 0 };

/**
 * When a new cluster's lease ends (ms; 0 = never). `initialLeaseDuration` may not exceed the template's
 * initial lease unless that is 0 (unlimited).
 */
export function leaseExpiry(template: ClusterTemplate, requested: number | undefined, now: number): number {
  const { initial } = leaseOf(template);
  if (requested !== undefined && initial > 0 && requested > initial) {
    throw new BadRequestError(`initialLeaseDuration ${requested} exceeds the template's initial lease of ${initial} ms`, {
      field: "initialLeaseDuration",
    });
  }
  const duration = requested ?? initial;
  return duration > 0 ? now + duration : 0;
}

/**
 * Checks a lease extension (`POST /clusters/{id}` with `{expireTime}`): the new end may not lie more than
 * `max` after creation (0 = no limit), nor more than `step` after the current end (0 = any step), nor in the past.
 */
export function checkLeaseExtension(
  template: ClusterTemplate,
  cluster: { createTime: number; expireTime: number },
  expireTime: number,
  now: number,
): void {
  const { max, step } = leaseOf(template);
  if (expireTime <= now) throw new BadRequestError("expireTime must lie in the future", { field: "expireTime" });
  if (cluster.expireTime === 0) {
    throw new BadRequestError("the cluster's lease never ends; it cannot be extended", { field: "expireTime" });
  }
  if (max > 0 && expireTime - cluster.createTime > max) {
    throw new BadRequestError(`expireTime may be at most ${max} ms after the cluster's creation`, { field: "expireTime" });
  }
  if (step > 0 && expireTime - cluster.expireTime > step) {
    throw new BadRequestError(`the lease may be extended by at most ${step} ms at a time`, { field: "expireTime" });
  }
}
