import {
  BadRequestError,
  CLUSTER_STATUSES,
  getOwn,
  optionalInteger,
  optionalName,
  optionalNameList,
  optionalObject,
  optionalString,
  parseBoolean,
  parseInteger,
  parseJsonObject,
  parseName,
  parseNameList,
  requireObject,
  type ClusterStatus,
  type CreateClusterBody,
  type JsonObject,
  type QueryValues,
} from "@corral/contracts";

/** `POST /clusters`, validated. */
export type CreateClusterRequest = CreateClusterBody;

const optionalFields = (obj: Record<string, unknown>): JsonObject | undefined => {
  const raw = getOwn(obj, "providerFields");
  return raw === undefined || raw === null ? undefined : parseJsonObject(raw, "providerFields");
};

export function parseCreateCluster(body: unknown): CreateClusterRequest {
  const obj = requireObject(body, "");
  const req: CreateClusterRequest = {
    name: parseName(getOwn(obj, "name"), "name"),
    clusterTemplate: parseName(getOwn(obj, "clusterTemplate"), "clusterTemplate"),
    numMachines: parseInteger(getOwn(obj, "numMachines"), "numMachines", { min: 1 }),
  };
  const description = optionalString(getOwn(obj, "description"), "description");
  if (description !== undefined) req.description = description;
  for (const key of ["imagetype", "hardwaretype", "provider"] as const) {
    const v = optionalName(getOwn(obj, key), key);
    if (v !== undefined) req[key] = v;
  }
  const services = optionalNameList(getOwn(obj, "services"), "services");
  if (services !== undefined && services.length > 0) req.services = services;
  const lease = optionalInteger(getOwn(obj, "initialLeaseDuration"), "initialLeaseDuration", { min: 0 });
  if (lease !== undefined) req.initialLeaseDuration = lease;
  const dnsSuffix = optionalString(getOwn(obj, "dnsSuffix"), "dnsSuffix");
  if (dnsSuffix !== undefined && dnsSuffix !== "") {
    if (!/^\.?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)(\.[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/.test(dnsSuffix)) {
      throw new BadRequestError(`dnsSuffix "${dnsSuffix}" is not a valid DNS suffix`, { field: "dnsSuffix" });
    }
    req.dnsSuffix = dnsSuffix;
  }
  const config = optionalObject(getOwn(obj, "config"), "config");
  if (config !== undefined) req.config = parseJsonObject(config, "config");
  const fields = optionalFields(obj);
  if (fields !== undefined) req.providerFields = fields;
  return req;
}

/** Bodies that may carry only provider fields (delete, start, stop, restart): absent or `{}` is fine. */
export function parseProviderFieldsBody(body: unknown): JsonObject {
  if (body === undefined || body === null) return {};
  return optionalFields(requireObject(body, "")) ?? {};
}

/** `PUT /clusters/{id}/config`. */
export function parseConfigUpdate(body: unknown): { config: JsonObject; restart: boolean; providerFields: JsonObject } {
  const obj = requireObject(body, "");
  const raw = getOwn(obj, "config");
  if (raw === undefined) throw new BadRequestError("config is required", { field: "config" });
  return {
    config: parseJsonObject(raw, "config"),
    restart: parseBoolean(getOwn(obj, "restart"), "restart", true),
    providerFields: optionalFields(obj) ?? {},
  };
}

/** `POST /clusters/{id}/services`. */
export function parseAddServices(body: unknown): { services: string[]; providerFields: JsonObject } {
  const obj = requireObject(body, "");
  const services = parseNameList(getOwn(obj, "services"), "services");
  if (services.length === 0) throw new BadRequestError("services must name at least one service", { field: "services" });
  return { services: [...new Set(services)], providerFields: optionalFields(obj) ?? {} };
}

/** `GET /clusters?status=`: comma-separated statuses, any case; absent or empty: every status. */
export function parseStatusFilter(raw: string | undefined): Set<ClusterStatus> | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const wanted = raw.split(",").map((s) => s.trim().toLowerCase()).filter(Boolean);
  for (const s of wanted) {
    if (!CLUSTER_STATUSES.includes(s as ClusterStatus)) {
      throw new BadRequestError(`status ${s} is not one of ${CLUSTER_STATUSES.join(", ")}`, { field: "status" });
    }
  }
  return new Set(wanted as ClusterStatus[]);
}

/** `?dryRun=true`: answer what the request would do instead of doing it; `false` or absent: do it. */
export function parseDryRun(query: QueryValues<"dryRun">): boolean {
  return parseBoolean(getOwn(query, "dryRun"), "dryRun", false);
}

/** `POST /clusters/{id}` (lease extension). */
export function parseLeaseExtension(body: unknown): { expireTime: number } {
  const obj = requireObject(body, "");
  return { expireTime: parseInteger(getOwn(obj, "expireTime"), "expireTime", { min: 0 }) };
}

/** `POST /getNodeProperties`, validated. */
export function parseNodePropertiesRequest(body: unknown): { clusterId: string; properties: string[]; services: string[] } {
  const obj = requireObject(body, "");
  const clusterId = getOwn(obj, "clusterId");
  if (typeof clusterId !== "string" || clusterId === "") {
    throw new BadRequestError("clusterId is required", { field: "clusterId" });
  }
  const list = (key: string): string[] => {
    const v = getOwn(obj, key);
    if (v === undefined || v === null) return [];
    if (!Array.isArray(v) || v.some((s) => typeof s !== "string")) {
      throw new BadRequestError(`${key} must be an array of strings`, { field: key });
    }
    return v as string[];
  };
  return { clusterId, properties: list("properties"), services: list("services") };
}
