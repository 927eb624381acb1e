/** Reading and writing a nested member of a JSON object by its dotted path (`defaults.services`), as forms edit them. */
type JsonRecord = Record<string, unknown>;

const isRecord = (value: unknown): value is JsonRecord => typeof value === "object" && value !== null && !Array.isArray(value);

export function getPath(root: unknown, path: string): unknown {
  let at: unknown = root;
  for (const key of path.split(".")) {
    if (!isRecord(at) || !Object.hasOwn(at, key)) return undefined;
    at = at[key];
  }
  return at;
}

/**
 * Sets `path` in `root` to `value`, making the objects on the way; `undefined` removes the member, and objects
 * left empty by that removal go too (an all-empty lease section sends no `administration`).
 */
export function setPath(root: JsonRecord, path: string, value: unknown): void {
  const keys = path.split(".");
  const last = keys.pop() as string;
  const chain: Array<{ parent: JsonRecord; key: string }> = [];
  let at = root;
  for (const key of keys) {
    if (!isRecord(at[key])) {
      if (value === undefined) return;
      at[key] = {};
    }
    chain.push({ parent: at, key });
    at = at[key] as JsonRecord;
  }
  if (value !== undefined) {
    at[last] = value;
    return;
  }
  delete at[last];
  for (const { parent, key } of chain.reverse()) {
    if (Object.keys(parent[key] as JsonRecord).length > 0) return;
    delete parent[key];
  }
}
