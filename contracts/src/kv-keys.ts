const PLAIN_TOKEN = /^[-A-Za-z0-9]+$/;

/**
 * KV keys are NATS subject tokens: only `[-/_=.A-Za-z0-9]`, with `.` separating tokens and no empty token.
 * Entity names may contain `.` and `_` (the NAME rule), so each name is escaped into one token:
 * `_` -> `_5F`, `.` -> `_2E`, and any other byte outside `[-A-Za-z0-9]` -> `_XX`. The mapping is reversible.
 */
export function keyToken(name: string): string {
  // Most names (ids, tenants) need no escape; keys are made on every read and write.
  if (PLAIN_TOKEN.test(name)) return name;
  let out = "";
  for (const ch of Buffer.from(name, "utf8")) {
    const c = String.fromCharCode(ch);
    out += /[-A-Za-z0-9]/.test(c) ? c : "_" + ch.toString(16).toUpperCase().padStart(2, "0");
  }
  return out;
}

/** Inverse of `keyToken`. */
export function fromKeyToken(token: string): string {
  const bytes: number[] = [];
  for (let i = 0; i < token.length; i++) {
    if (token[i] === "_") {
      bytes.push(parseInt(token.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(token.charCodeAt(i));
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Joins names into a dotted key, escaping each. */
export function kvKey(...names: string[]): string {
  return names.map(keyToken).join(".");
}

/** Key of a plugin type in the plugin-types bucket: `<automatortypes|providertypes>.<name>`. */
export function pluginTypeKey(kind: "automatortypes" | "providertypes", name: string): string {
  return `${kind}.${keyToken(name)}`;
}
