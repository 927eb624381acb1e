/**
 * EC2's Query protocol, the request side: a form body (`Action=RunInstances&Version=2016-11-15&...`) whose lists
 * are numbered from 1 (`InstanceId.1`, `Filter.1.Name`, `Filter.1.Value.1`, `TagSpecification.1.Tag.1.Key`).
 */

export type Params = ReadonlyMap<string, string>;

export function parseForm(body: string): Map<string, string> {
  return new Map(new URLSearchParams(body));
}

/** The values of `<prefix>.1`, `<prefix>.2`, ... in order, up to the first gap. */
export function list(params: Params, prefix: string): string[] {
  const out: string[] = [];
  for (let i = 1; params.has(`${prefix}.${i}`); i++) out.push(params.get(`${prefix}.${i}`)!);
  return out;
}

/** The indexes n of `<prefix>.n.*` (structures of a list), in order, up to the first gap. */
export function members(params: Params, prefix: string): string[] {
  const out: string[] = [];
  const present = (n: number) => [...params.keys()].some((k) => k.startsWith(`${prefix}.${n}.`));
  for (let i = 1; present(i); i++) out.push(`${prefix}.${i}`);
  return out;
}

export interface Filter {
  name: string;
  values: string[];
}

export function filters(params: Params): Filter[] {
  return members(params, "Filter").map((m) => ({ name: params.get(`${m}.Name`) ?? "", values: list(params, `${m}.Value`) }));
}

export interface TagSpec {
  resourceType: string;
  tags: Array<{ key: string; value: string }>;
}

export function tags(params: Params, prefix: string): Array<{ key: string; value: string }> {
  return members(params, prefix).map((m) => ({ key: params.get(`${m}.Key`) ?? "", value: params.get(`${m}.Value`) ?? "" }));
}

export function tagSpecifications(params: Params): TagSpec[] {
  return members(params, "TagSpecification").map((m) => ({ resourceType: params.get(`${m}.ResourceType`) ?? "", tags: tags(params, `${m}.Tag`) }));
}

/** EC2's filter values may hold `*` (any run) and `?` (one character). */
export function matchesValue(pattern: string, value: string): boolean {
  if (!/[*?]/.test(pattern)) return pattern === value;
  const re = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*").replace(/\?/g, ".")}$`, "s");
  return re.test(value);
}

export const isTrue = (value: string | undefined) => value?.toLowerCase() === "true";
