import { createHash, timingSafeEqual } from "node:crypto";

/**
 * The realm file of basic authentication, as Jetty's HashLoginService read it: one user per line,
 * `username: password[,rolename ...]` (`=` also separates), `#` and `!` start comments.
 *
 * Password forms (Jetty's credential prefixes):
 * - plain text;
 * - `MD5:<32 hex digits>`: the MD5 digest of the password;
 * - `OBF:<...>`: Jetty's reversible obfuscation (not security, only against shoulder-surfing);
 * - `CRYPT:` (Unix DES crypt) is not supported: such users cannot log in, and the problem is reported.
 */

export interface RealmUser {
  /** The stored credential, prefix included. */
  credential: string;
  roles: string[];
}

export interface Realm {
  users: ReadonlyMap<string, RealmUser>;
  /** Lines that could not be used, with the reason (line numbers from 1; never the password). */
  problems: string[];
}

export function parseRealm(text: string): Realm {
  const users = new Map<string, RealmUser>();
  const problems: string[] = [];
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (!line || line.startsWith("#") || line.startsWith("!")) return;
    const m = /^([^:=\s]+)\s*[:=]\s*(.*)$/.exec(line);
    if (!m?.[1]) {
      problems.push(`line ${index + 1}: expected "username: password[,role ...]"`);
      return;
    }
    const [credential = "", ...roles] = (m[2] ?? "").split(",").map((s) => s.trim());
    if (!credential) {
      problems.push(`line ${index + 1}: user ${m[1]} has no password`);
      return;
    }
    if (/^CRYPT:/i.test(credential)) {
      problems.push(`line ${index + 1}: user ${m[1]} has a CRYPT: password, which is not supported (use MD5: or plain)`);
      return;
    }
    users.set(m[1], { credential, roles: roles.filter(Boolean) });
  });
  return { users, problems };
}

/** Whether `password` matches a stored credential; constant-time in the password. */
export function credentialMatches(credential: string, password: string): boolean {
  const upper = credential.slice(0, 4).toUpperCase();
  if (upper === "MD5:") {
    const expected = credential.slice(4).trim().toLowerCase();
    return sameDigest(createHash("md5").update(password, "utf8").digest("hex"), expected);
  }
  if (upper === "OBF:") return sameDigest(sha256(deobfuscate(credential)), sha256(password));
  return sameDigest(sha256(credential), sha256(password));
}

function sha256(text: string): string {
  return createHash("sha256").update(text, "utf8").digest("hex");
}

function sameDigest(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Jetty's `Password.deobfuscate` (org.eclipse.jetty.util.security.Password). */
export function deobfuscate(obfuscated: string): string {
  const s = obfuscated.startsWith("OBF:") ? obfuscated.slice(4) : obfuscated;
  const bytes: number[] = [];
  for (let i = 0; i < s.length; i += 4) {
    if (s[i] === "U") {
      i++;
      const i0 = parseInt(s.slice(i, i + 4), 36);
      bytes.push((i0 >> 8) & 0xff);
    } else {
      const i0 = parseInt(s.slice(i, i + 4), 36);
      const i1 = Math.floor(i0 / 256);
      const i2 = i0 % 256;
      bytes.push(((i1 + i2 - 254) / 2) & 0xff);
    }
  }
  return Buffer.from(bytes).toString("utf8");
}

/** Jetty's `Password.obfuscate`, for writing realm files and for tests. */
export function obfuscate(password: string): string {
  const b = Buffer.from(password, "utf8");
  let out = "OBF:";
  for (let i = 0; i < b.length; i++) {
    const b1 = toSigned(b[i]!);
    const b2 = toSigned(b[b.length - (i + 1)]!);
    if (b1 < 0 || b2 < 0) {
      const x = ((0xff & b1) * 256 + (0xff & b2)).toString(36).toLowerCase();
      out += "U0000".slice(0, 5 - x.length) + x;
    } else {
      const i1 = 127 + b1 + b2;
      const i2 = 127 + b1 - b2;
      const x = (i1 * 256 + i2).toString(36).toLowerCase();
      out += "000".slice(0, 4 - x.length) + x;
    }
  }
  return out;
}

function toSigned(byte: number): number {
  return byte > 127 ? byte - 256 : byte;
}
