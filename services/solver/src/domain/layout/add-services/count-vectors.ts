/**
 * The candidate placements of one service, as Coopr orders them: vectors "add it to taken[j] nodes of slot j"
 * (slots: the groups that can take it, in Coopr's node-layout order) with a given total, in descending
 * lexicographic order. Forced slots take it on every node. A prefix is cut as soon as some pending service
 * could no longer be placed whatever the remaining slots take: the nodes that could take a pending service only
 * get fewer, and those that must take it only more, as services are added.
 */
import type { Budget } from "../budget.js";
import type { NodeGroup } from "./node-groups.js";
import type { PendingOutlook } from "./pending-outlook.js";

/** A group that can take the service being placed. */
export interface Slot {
  /** Index into the groups. */
  group: number;
  /** Its nodes must take the service (all of them). */
  forced: boolean;
}

/** Per pending service: nodes that can take it, nodes that must, and whether some node must but cannot. */
interface PendingTally {
  canTake: number[];
  mustTake: number[];
  conflict: boolean[];
}

const emptyTally = (pendingCount: number): PendingTally => ({
  canTake: new Array<number>(pendingCount).fill(0),
  mustTake: new Array<number>(pendingCount).fill(0),
  conflict: new Array<boolean>(pendingCount).fill(false),
});

/** The pending services' tally over the groups that do not take the service now (they stay as they are). */
function untouchedTally(
  groups: readonly NodeGroup[],
  untouched: readonly boolean[],
  outlooks: readonly PendingOutlook[],
): PendingTally {
  const tally = emptyTally(outlooks.length);
  outlooks.forEach((outlook, r) => {
    groups.forEach((group, g) => {
      if (!untouched[g]) return;
      const [canNow] = outlook.canTake[g]!;
      const [mustNow] = outlook.mustTake[g]!;
      if (canNow) tally.canTake[r]! += group.count;
      if (mustNow) tally.mustTake[r]! += group.count;
      if (mustNow && !canNow) tally.conflict[r] = true;
    });
  });
  return tally;
}

/**
 * For each slot index j, the most hopeful tally of slots j.. however they split: a node counts as able to take
 * a pending service when it can in some variant, as forced to take it when it must in every variant.
 */
function optimisticTallies(
  slots: readonly Slot[],
  slotNodes: readonly number[],
  outlooks: readonly PendingOutlook[],
): PendingTally[] {
  const tallies = Array.from({ length: slots.length + 1 }, () => emptyTally(outlooks.length));
  outlooks.forEach((outlook, r) => {
    for (let j = slots.length - 1; j >= 0; j--) {
      const { group, forced } = slots[j]!;
      const nodes = slotNodes[j]!;
      const [canWithout, canWith] = outlook.canTake[group]!;
      const [mustWithout, mustWith] = outlook.mustTake[group]!;
      const after = tallies[j + 1]!;
      // A forced slot takes the service on every node: only the "with" variant exists.
      const canSome = forced ? canWith : canWithout || canWith;
      const mustAll = forced ? mustWith : mustWithout && mustWith;
      const conflict = forced ? mustWith && !canWith : mustWithout && !canWithout && mustWith && !canWith;
      tallies[j]!.canTake[r] = after.canTake[r]! + (canSome ? nodes : 0);
      tallies[j]!.mustTake[r] = after.mustTake[r]! + (mustAll ? nodes : 0);
      tallies[j]!.conflict[r] = after.conflict[r]! || conflict;
    }
  });
  return tallies;
}

/**
 * Vectors over `slots` with sum `nodesToPlace`, in descending lexicographic order, skipping prefixes that leave
 * a pending service (one outlook each) no valid future. `untouched[g]`: group g is no slot. Every enumeration
 * step is spent from `budget`.
 */
export function* countVectors(
  groups: readonly NodeGroup[],
  slots: readonly Slot[],
  untouched: readonly boolean[],
  outlooks: readonly PendingOutlook[],
  nodesToPlace: number,
  budget: Budget,
): Generator<number[]> {
  const slotCount = slots.length;
  const pendingCount = outlooks.length;
  const slotNodes = slots.map((slot) => groups[slot.group]!.count);
  // Nodes (and forced nodes) in slots j.. .
  const nodesFrom = new Array<number>(slotCount + 1).fill(0);
  const forcedNodesFrom = new Array<number>(slotCount + 1).fill(0);
  for (let j = slotCount - 1; j >= 0; j--) {
    nodesFrom[j] = nodesFrom[j + 1]! + slotNodes[j]!;
    forcedNodesFrom[j] = forcedNodesFrom[j + 1]! + (slots[j]!.forced ? slotNodes[j]! : 0);
  }
  const later = optimisticTallies(slots, slotNodes, outlooks);
  const base = untouchedTally(groups, untouched, outlooks);
  if (base.conflict.some((c) => c)) return;
  // decided[j]: the tally of the untouched groups and of slots before j as split so far.
  const decided = Array.from({ length: slotCount + 1 }, () => emptyTally(pendingCount));
  decided[0]!.canTake = base.canTake;
  decided[0]!.mustTake = base.mustTake;

  /** After deciding the slots before j: can every pending service still be placed? */
  const pendingStillPlaceable = (j: number): boolean => {
    const now = decided[j]!;
    const rest = later[j]!;
    for (let r = 0; r < pendingCount; r++) {
      if (now.conflict[r] || rest.conflict[r]) return false;
      const outlook = outlooks[r]!;
      const must = now.mustTake[r]! + rest.mustTake[r]!;
      const can = now.canTake[r]! + rest.canTake[r]!;
      if (must > outlook.maxNodes || can < outlook.minNodes) return false;
    }
    return true;
  };
  /** Records that slot j gives the service to `taking` of its nodes. */
  const decideSlot = (j: number, taking: number): void => {
    const group = slots[j]!.group;
    const notTaking = slotNodes[j]! - taking;
    const before = decided[j]!;
    const after = decided[j + 1]!;
    for (let r = 0; r < pendingCount; r++) {
      const outlook = outlooks[r]!;
      const [canWithout, canWith] = outlook.canTake[group]!;
      const [mustWithout, mustWith] = outlook.mustTake[group]!;
      after.canTake[r] = before.canTake[r]! + (canWithout ? notTaking : 0) + (canWith ? taking : 0);
      after.mustTake[r] = before.mustTake[r]! + (mustWithout ? notTaking : 0) + (mustWith ? taking : 0);
      after.conflict[r] =
        before.conflict[r]! || (notTaking > 0 && mustWithout && !canWithout) || (taking > 0 && mustWith && !canWith);
    }
  };
  if (!pendingStillPlaceable(0)) return;

  const taken = new Array<number>(slotCount).fill(0);
  const leastTaken = new Array<number>(slotCount).fill(0);
  // toPlace[j]: nodes still to give the service, from slot j on.
  const toPlace = new Array<number>(slotCount + 1).fill(0);
  toPlace[0] = nodesToPlace;
  /** Sets slot j to the most nodes it can take given toPlace[j], and its least; false when none fits. */
  const openSlot = (j: number): boolean => {
    const left = toPlace[j]!;
    let most = Math.min(slotNodes[j]!, left - forcedNodesFrom[j + 1]!);
    let least = Math.max(0, left - nodesFrom[j + 1]!);
    if (slots[j]!.forced) {
      if (slotNodes[j]! > most || slotNodes[j]! < least) return false;
      most = least = slotNodes[j]!;
    }
    if (most < least) return false;
    taken[j] = most;
    leastTaken[j] = least;
    return true;
  };
  let j = 0;
  if (slotCount === 0 || !openSlot(0)) return;
  for (;;) {
    budget.spend();
    decideSlot(j, taken[j]!);
    const placeable = pendingStillPlaceable(j + 1);
    if (placeable && j + 1 === slotCount) {
      if (toPlace[j]! - taken[j]! === 0) yield [...taken];
    } else if (placeable) {
      toPlace[j + 1] = toPlace[j]! - taken[j]!;
      if (openSlot(j + 1)) {
        j++;
        continue;
      }
    }
    // Next candidate: take one node fewer in the deepest slot that can.
    for (;;) {
      if (taken[j]! > leastTaken[j]!) {
        taken[j]!--;
        break;
      }
      j--;
      if (j < 0) return;
    }
  }
}
