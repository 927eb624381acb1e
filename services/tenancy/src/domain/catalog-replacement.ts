import { CATALOG_KINDS, type CatalogEntity, type CatalogKind, type CatalogSnapshot } from "@corral/contracts";

export interface ReplacementPlan {
  deletes: Array<{ kind: CatalogKind; name: string }>;
  puts: Array<{ kind: CatalogKind; entity: CatalogEntity }>;
}

/** What turns the stored catalog (`existing` names) into exactly `snapshot`. Pure. */
export function planReplacement(
  existing: ReadonlyArray<{ kind: CatalogKind; name: string }>,
  snapshot: CatalogSnapshot,
): ReplacementPlan {
  const wanted = new Set<string>();
  const puts: ReplacementPlan["puts"] = [];
  for (const kind of CATALOG_KINDS) {
    for (const entity of snapshot[kind]) {
      wanted.add(`${kind}/${entity.name}`);
      puts.push({ kind, entity });
    }
  }
  const deletes = existing.filter((e) => !wanted.has(`${e.kind}/${e.name}`));
  return { deletes, puts };
}

/** A catalog with nothing in it. */
export function emptySnapshot(): CatalogSnapshot {
  return { providers: [], hardwaretypes: [], imagetypes: [], services: [], clustertemplates: [] };
}
