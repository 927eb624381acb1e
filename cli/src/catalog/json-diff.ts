/** Differences between two JSON values as paths (`dependencies.runtime.requires[1]`), for apply's short diff. */

export interface Change {
  path: string;
  /** Absent: added. */
  before?: unknown;
  /** Absent: removed. */
  after?: unknown;
}

export function diffJson(before: unknown, after: unknown, path = ""): Change[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((key) => {
      const at = path ? `${path}.${key}` : key;
      if (!(key in after)) return [{ path: at, before: before[key] }];
      if (!(key in before)) return [{ path: at, after: after[key] }];
      return diffJson(before[key], after[key], at);
    });
  }
  if (Array.isArray(before) && Array.isArray(after)) {
    const changes: Change[] = [];
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const at = `${path}[${i}]`;
      if (i >= after.length) changes.push({ path: at, before: before[i] });
      else if (i >= before.length) changes.push({ path: at, after: after[i] });
      else changes.push(...diffJson(before[i], after[i], at));
    }
    return changes;
  }
  return Object.is(before, after) ? [] : [{ path: path || "(whole)", before, after }];
}

/** `~ path: old -> new`, `+ path: new`, `- path: old`. */
export function describeChange(change: Change): string {
  const show = (v: unknown) => {
    const text = JSON.stringify(v);
    return text.length > 60 ? `${text.slice(0, 57)}...` : text;
  };
  if (!("before" in change)) return `+ ${change.path}: ${show(change.after)}`;
  if (!("after" in change)) return `- ${change.path}: ${show(change.before)}`;
  return `~ ${change.path}: ${show(change.before)} -> ${show(change.after)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
