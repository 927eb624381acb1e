/**
 * Catalog entities from files: a folder (each file one entity, its kind the name of a folder above it, as
 * `corral export` writes and the Coopr fixture catalog is laid out), a file with a `kind` field, or a file
 * holding an export (`{providers: [...], services: [...], ...}`). JSON or YAML.
 */
import { readdir, stat } from "node:fs/promises";
import { basename, extname, join, relative, resolve, sep } from "node:path";
import { CATALOG_KINDS, type CatalogKind } from "@corral/contracts";
import { UsageError } from "../errors.js";
import { readDocument } from "../input-files.js";
import { isPlainObject } from "../output/table.js";

export interface DesiredEntity {
  kind: CatalogKind;
  name: string;
  body: Record<string, unknown>;
  /** Where it was read (file, and index within an export file). */
  source: string;
}

export interface ReadCatalog {
  entities: DesiredEntity[];
  /** Files that name no catalog kind (a plugins/ folder beside the catalog, ...), left alone. */
  skipped: string[];
}

const DOCUMENT_EXTENSIONS = new Set([".json", ".yaml", ".yml"]);

export async function readCatalogFiles(paths: readonly string[], stdin: NodeJS.ReadableStream): Promise<ReadCatalog> {
  const out: ReadCatalog = { entities: [], skipped: [] };
  for (const path of paths) {
    const isDirectory = path !== "-" && (await statOf(path)).isDirectory();
    if (isDirectory) {
      for (const file of await documentsUnder(path)) await readFileInto(out, join(path, file), kindOfFolder(join(resolve(path), file)), stdin);
    } else {
      await readFileInto(out, path, path === "-" ? undefined : kindOfFolder(resolve(path)), stdin);
    }
  }
  refuseDuplicates(out.entities);
  return out;
}

async function readFileInto(out: ReadCatalog, file: string, folderKind: CatalogKind | undefined, stdin: NodeJS.ReadableStream): Promise<void> {
  const doc = await readDocument(file, stdin);
  if (!isPlainObject(doc)) throw new UsageError(`${file}: a catalog file holds a JSON or YAML object`);
  if (CATALOG_KINDS.some((kind) => Array.isArray(doc[kind]))) {
    for (const kind of CATALOG_KINDS) {
      const list = doc[kind];
      if (list === undefined) continue;
      if (!Array.isArray(list)) throw new UsageError(`${file}: ${kind} must be a list`);
      list.forEach((entity, i) => out.entities.push(entityOf(kind, entity, `${file} ${kind}[${i}]`)));
    }
    return;
  }
  const { kind: givenKind, ...body } = doc;
  const kind = givenKind ?? folderKind;
  if (kind === undefined) {
    out.skipped.push(file);
    return;
  }
  if (typeof kind !== "string" || !isCatalogKind(kind)) {
    throw new UsageError(`${file}: kind ${JSON.stringify(kind)} is not a catalog kind (${CATALOG_KINDS.join(", ")})`);
  }
  out.entities.push(entityOf(kind, body, file));
}

function entityOf(kind: CatalogKind, entity: unknown, source: string): DesiredEntity {
  if (!isPlainObject(entity)) throw new UsageError(`${source}: an entity is a JSON object`);
  const name = entity["name"];
  if (typeof name !== "string" || name === "") throw new UsageError(`${source}: the entity has no name`);
  return { kind, name, body: entity, source };
}

function refuseDuplicates(entities: readonly DesiredEntity[]): void {
  const seen = new Map<string, string>();
  for (const e of entities) {
    const key = `${e.kind}/${e.name}`;
    const first = seen.get(key);
    if (first !== undefined) throw new UsageError(`${key} is given twice: in ${first} and in ${e.source}`);
    seen.set(key, e.source);
  }
}

/** JSON and YAML files under `dir`, relative to it, sorted (dot files and folders left out). */
async function documentsUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile() && DOCUMENT_EXTENSIONS.has(extname(e.name).toLowerCase()))
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .filter((file) => !file.split(sep).some((part) => part.startsWith(".")))
    .sort();
}

async function statOf(path: string) {
  try {
    return await stat(path);
  } catch (err) {
    throw new UsageError(`cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
  }
}

/** The kind a file's folder names: the nearest folder above it called like a catalog kind. */
function kindOfFolder(file: string): CatalogKind | undefined {
  return file.split(sep).slice(0, -1).reverse().find(isCatalogKind);
}

function isCatalogKind(value: string): value is CatalogKind {
  return (CATALOG_KINDS as readonly string[]).includes(value);
}

/** `providers/aws.json`: where export writes an entity. */
export function entityFile(kind: CatalogKind, name: string, extension: "json" | "yaml"): string {
  return join(kind, `${basename(name)}.${extension}`);
}
