/**
 * New nodes with the services the request names: one node layout for all of them, checked as the solver's own
 * choices are. The hardware and image type are the pinned ones, else the first usable type (by name) that every
 * named service allows, as a create gives a node layout.
 */
import { BadRequestError } from "@corral/contracts";
import type { UsableType } from "../catalog.js";
import { firstServiceSetViolation, sortNames, type NormalizedConstraints } from "../constraints.js";
import type { CandidateLayout } from "../node-layouts.js";
import { nodeCount, nodesHolding } from "./cluster-state.js";
import type { CheckedGrow } from "./grow-checks.js";
import type { NewLayouts } from "./grow-search.js";

type TypeKind = "hardwaretypes" | "imagetypes";

/** The first of `usable` that every service allows, or a 400 naming the services that rule the others out. */
function chooseType(kind: TypeKind, usable: readonly UsableType[], services: readonly string[], constraints: NormalizedConstraints): string {
  const allowed = (s: string, type: string): boolean => {
    const list = constraints.services.get(s)?.[kind];
    return list === null || list === undefined || list.has(type);
  };
  const fit = usable.find((t) => services.every((s) => allowed(s, t.name)));
  if (fit !== undefined) return fit.name;
  const noun = kind === "hardwaretypes" ? "hardware" : "image";
  const lists = services.flatMap((s) => {
    const list = constraints.services.get(s)?.[kind];
    return list === null || list === undefined ? [] : [`${s} allows [${[...list].join(", ")}]`];
  });
  const names = usable.map((t) => t.name);
  throw new BadRequestError(
    `no usable ${noun} type suits new nodes with [${services.join(", ")}]: ${usable.length === 1 ? `the ${noun} type is` : `usable ${noun} types are`} ` +
      `[${names.join(", ")}], ${lists.join(", ")}`,
    { constraint: kind, services, usable: names },
  );
}

/** Why a node holding exactly `services` breaks a layout constraint, or undefined. */
function serviceSetProblem(services: readonly string[], checked: CheckedGrow): { constraint: string; message: string } | undefined {
  const v = firstServiceSetViolation(new Set(services), checked.constraints, new Set(checked.available));
  if (v?.kind === "cantcoexist") {
    return { constraint: "cantcoexist", message: `a node may not hold all of cantcoexist [${v.set.join(", ")}]` };
  }
  if (v?.kind === "mustcoexist") {
    const has = v.set.filter((s) => services.includes(s));
    return {
      constraint: "mustcoexist",
      message: `a node with ${has.join(", ")} must hold ${v.missing.join(", ")} too (mustcoexist [${v.set.join(", ")}])`,
    };
  }
  return undefined;
}

/**
 * `k` new nodes holding exactly `requested` (deduplicated).
 *
 * @throws BadRequestError (400) with `details.constraint` `services` (a service not on the cluster), `mustcoexist`,
 *   `cantcoexist`, `quantities`, `hardwaretypes` or `imagetypes`.
 */
export function requestedLayouts(checked: CheckedGrow, requested: readonly string[], k: number): NewLayouts {
  const { state, constraints } = checked;
  const services = sortNames([...new Set(requested)]);
  const strangers = services.filter((s) => !state.services.includes(s));
  if (strangers.length > 0) {
    throw new BadRequestError(
      `${strangers.join(", ")} ${strangers.length === 1 ? "is" : "are"} not on the cluster: new nodes take services the cluster has`,
      { constraint: "services", services: strangers },
    );
  }
  const unavailable = services.find((s) => !checked.available.includes(s));
  if (unavailable !== undefined) {
    const set = constraints.mustcoexist.find((m) => m.includes(unavailable) && m.some((t) => state.present.has(t)))!;
    throw new BadRequestError(
      `${unavailable} may not go on new nodes: it is on no node yet, and the nodes with the other services of mustcoexist ` +
        `[${set.join(", ")}] lack it`,
      { constraint: "mustcoexist", service: unavailable, set },
    );
  }
  const setProblem = serviceSetProblem(services, checked);
  if (setProblem !== undefined) {
    throw new BadRequestError(`new nodes cannot hold [${services.join(", ")}]: ${setProblem.message}`, {
      constraint: setProblem.constraint,
      services,
    });
  }
  for (const s of services) {
    const sc = constraints.services.get(s);
    const on = nodesHolding(state, s);
    if (sc !== undefined && on + k > sc.max) {
      throw new BadRequestError(
        `service ${s} is on ${nodeCount(on)} and may be on at most ${nodeCount(sc.max)}: ${nodeCount(k)} more with it would be too many`,
        { constraint: "quantities", service: s, on, max: sc.max, numMachines: k },
      );
    }
  }
  for (const s of state.services) {
    const min = constraints.services.get(s)?.min ?? 0;
    const on = nodesHolding(state, s) + (services.includes(s) ? k : 0);
    if (on < min) {
      throw new BadRequestError(`service ${s} must be on at least ${nodeCount(min)}, and with the new nodes it would be on ${on}`, {
        constraint: "quantities",
        service: s,
        min,
        on,
      });
    }
  }
  const layout: CandidateLayout = {
    services,
    hardwaretype: chooseType("hardwaretypes", checked.hardware, services, constraints),
    imagetype: chooseType("imagetypes", checked.images, services, constraints),
  };
  return { layouts: [layout], counts: [k] };
}
