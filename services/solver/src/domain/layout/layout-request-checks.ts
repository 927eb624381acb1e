/**
 * The checks of a create request before any search, in Coopr's order: machine count, template size, usable
 * hardware and image types, the service list (existence, compatibility, requires, conflicts).
 */
import { BadRequestError, describeValue, type LayoutRequest } from "@corral/contracts";
import { checkDependencies, checkServiceCompatibility, lookupServices, resolveUsableTypes, toNameMap, type UsableType } from "./catalog.js";
import type { NormalizedConstraints } from "./constraints.js";

/** A create request that passed the checks, in the form the solver reads. */
export interface CheckedLayoutRequest {
  /** Usable hardware types, sorted by name. */
  hardware: UsableType[];
  /** Usable image types, sorted by name. */
  images: UsableType[];
  /** The cluster's services: the request's list or the template default, deduplicated. */
  services: string[];
}

export const nonEmpty = (s: string | undefined): string | undefined => (s === undefined || s === "" ? undefined : s);

function checkMachineCount(request: LayoutRequest, constraints: NormalizedConstraints): void {
  const n = request.numMachines;
  if (!Number.isSafeInteger(n) || n < 1) {
    throw new BadRequestError(`numMachines must be a positive integer, got ${describeValue(n)}`, {
      constraint: "numMachines",
      numMachines: n,
    });
  }
  if (n < constraints.sizeMin || n > constraints.sizeMax) {
    const bound =
      constraints.sizeMax === Infinity
        ? `at least ${constraints.sizeMin}`
        : `at least ${constraints.sizeMin} but not greater than ${constraints.sizeMax}`;
    throw new BadRequestError(
      `Size must be ${bound}. Now it's ${n} (template ${request.template.name}, constraints.size)`,
      { constraint: "size", min: constraints.sizeMin, max: constraints.sizeMax === Infinity ? null : constraints.sizeMax, numMachines: n },
    );
  }
}

/**
 * The hardware and image types new nodes may use: the request's type, else the template's default, else every
 * usable one (see `resolveUsableTypes`).
 *
 * @throws BadRequestError (400) with `details.constraint` `hardwaretype` or `imagetype`.
 */
export function resolveNodeTypes(
  request: Pick<LayoutRequest, "template" | "provider" | "hardwaretype" | "imagetype"> & {
    catalog: Pick<LayoutRequest["catalog"], "hardwareTypes" | "imageTypes">;
  },
): { hardware: UsableType[]; images: UsableType[] } {
  const { template, catalog, provider } = request;
  const defaults = template.defaults;
  const hardwaretype = nonEmpty(request.hardwaretype) ?? nonEmpty(defaults.hardwaretype);
  const imagetype = nonEmpty(request.imagetype) ?? nonEmpty(defaults.imagetype);
  return {
    hardware: resolveUsableTypes("hardware", toNameMap(catalog.hardwareTypes), hardwaretype, template, provider.name),
    images: resolveUsableTypes("image", toNameMap(catalog.imageTypes), imagetype, template, provider.name),
  };
}

/** @throws BadRequestError (400) naming the failed check in `details.constraint`. */
export function checkLayoutRequest(request: LayoutRequest, constraints: NormalizedConstraints): CheckedLayoutRequest {
  const { template } = request;
  checkMachineCount(request, constraints);
  const { hardware, images } = resolveNodeTypes(request);

  const given = request.services !== undefined && request.services.length > 0 ? request.services : template.defaults.services;
  const services = [...new Set(given)];
  if (services.length === 0) {
    throw new BadRequestError("a cluster needs at least one service", { constraint: "services" });
  }
  // A name that is no service at all is reported as such, before asking whether the template allows it.
  const serviceMap = lookupServices(toNameMap(request.catalog.services), services);
  checkServiceCompatibility(template, services);
  checkDependencies(serviceMap);
  return { hardware, images, services };
}
