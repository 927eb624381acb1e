/**
 * `corral apply`: brings each given catalog entity to the server, idempotently. An entity that does not exist
 * is created (POST), one that differs is updated (PUT, with the changed fields as a short diff), one that is
 * already so is left alone. "Already so" compares canonical forms: the given entity is put through the same
 * validation the services use (numeric strings as integers, defaults filled in), so a file written by hand
 * and the stored entity compare equal when the server would store the same thing.
 */
import {
  CATALOG_KINDS,
  mergeProviderUpdate,
  parseCatalogSnapshot,
  type CatalogEntity,
  type CatalogKind,
  type Provider,
} from "@corral/contracts";
import { ApiError } from "../errors.js";
import type { ApiClient } from "../http/api-client.js";
import { diffJson, type Change } from "./json-diff.js";
import type { DesiredEntity } from "./entity-files.js";

export type ApplyAction = "created" | "updated" | "unchanged" | "failed";

export interface ApplyOutcome {
  kind: CatalogKind;
  name: string;
  action: ApplyAction;
  /** For `updated`: what changed, stored before -> after. */
  changes?: Change[];
  /** For `failed`: the server's message. */
  error?: string;
  source: string;
}

type Catalog = { [K in CatalogKind]: CatalogEntity[] };

/** Plugin types are the services' to check; here any type passes (the server still refuses an unknown one). */
const LENIENT = { isProviderType: () => true, automatorType: (name: string) => ({ name }) };

export async function applyEntities(client: ApiClient, desired: readonly DesiredEntity[], options: { dryRun: boolean }): Promise<ApplyOutcome[]> {
  const current = await client.request<Catalog>("GET", "/export");
  const outcomes: ApplyOutcome[] = [];
  // Kinds in catalog order (templates name services, hardware and image types), files in the order read.
  for (const kind of CATALOG_KINDS) {
    for (const entity of desired.filter((e) => e.kind === kind)) {
      const existing = current[kind].find((e) => e.name === entity.name);
      outcomes.push(await applyOne(client, entity, existing, options.dryRun));
    }
  }
  return outcomes;
}

async function applyOne(client: ApiClient, entity: DesiredEntity, existing: CatalogEntity | undefined, dryRun: boolean): Promise<ApplyOutcome> {
  const { kind, name, source } = entity;
  const base = { kind, name, source };
  if (existing === undefined) {
    return dryRun ? { ...base, action: "created" } : attempt(base, () => client.request("POST", `/${kind}`, { body: entity.body }).then(() => ({ ...base, action: "created" as const })));
  }
  const wanted = canonicalForm(kind, kind === "providers" ? mergeProviderUpdate(existing as Provider, entity.body) : entity.body);
  if (wanted !== undefined && diffJson(existing, wanted).length === 0) return { ...base, action: "unchanged" };
  if (dryRun) return { ...base, action: "updated", changes: diffJson(existing, wanted ?? entity.body) };
  return attempt(base, async () => {
    const stored = await client.request<CatalogEntity>("PUT", `/${kind}/${encodeURIComponent(name)}`, { body: entity.body });
    return { ...base, action: "updated" as const, changes: diffJson(existing, stored) };
  });
}

/** The stored form of a body, or undefined when it does not validate (the server will say why). */
function canonicalForm(kind: CatalogKind, body: unknown): CatalogEntity | undefined {
  try {
    return parseCatalogSnapshot({ [kind]: [body] }, LENIENT)[kind][0];
  } catch {
    return undefined;
  }
}

async function attempt(base: Omit<ApplyOutcome, "action">, write: () => Promise<ApplyOutcome>): Promise<ApplyOutcome> {
  try {
    return await write();
  } catch (err) {
    if (err instanceof ApiError) return { ...base, action: "failed", error: `${err.status} ${err.body.message}` };
    throw err;
  }
}
