import { createHash } from "node:crypto";
import type { Json } from "@corral/contracts";

/**
 * Pinned SSH host keys, as CONFIRM records them in the node's results (`ssh_host_keys`): key algorithm (the
 * blob's own type name, `ssh-ed25519`, `ecdsa-sha2-nistp256`, `ssh-rsa`) -> base64 of the public key blob, the
 * form of a `known_hosts` line.
 */
export type HostKeys = Record<string, string>;

/** A host key as the server presented it. */
export interface PresentedHostKey {
  type: string;
  /** base64 of the key blob */
  key: string;
}

/** Reads the algorithm name from an SSH public key blob (a uint32 length, then the name). */
export function presentedHostKey(blob: Buffer): PresentedHostKey {
  let type = "unknown";
  if (blob.length >= 4) {
    const len = blob.readUInt32BE(0);
    if (len > 0 && len < 64 && blob.length >= 4 + len) type = blob.subarray(4, 4 + len).toString("latin1");
  }
  return { type, key: blob.toString("base64") };
}

/** `SHA256:<base64>` as `ssh-keygen -lf` prints it. */
export function fingerprint(keyBase64: string): string {
  return `SHA256:${createHash("sha256").update(Buffer.from(keyBase64, "base64")).digest("base64").replace(/=+$/, "")}`;
}

/**
 * The pinned keys of a node's results, or undefined when none are pinned. Coopr's `{rsa: "<base64>"}` form
 * is read too (its blob names its own type).
 */
export function pinnedHostKeys(value: Json | undefined): HostKeys | undefined {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return undefined;
  const keys: HostKeys = {};
  for (const raw of Object.values(value)) {
    if (typeof raw !== "string" || raw === "") continue;
    const blob = Buffer.from(raw, "base64");
    const { type } = presentedHostKey(blob);
    if (type !== "unknown") keys[type] = blob.toString("base64");
  }
  return Object.keys(keys).length ? keys : undefined;
}

/** Whether the presented key is one of the pinned ones. */
export function matchesPinned(pinned: HostKeys, presented: PresentedHostKey): boolean {
  return pinned[presented.type] === presented.key;
}

/** The message of a host-key mismatch: never accepted, always explained. */
export function hostKeyMismatchMessage(address: string, pinned: HostKeys, presented: PresentedHostKey): string {
  const expected = Object.entries(pinned)
    .map(([type, key]) => `${type} ${fingerprint(key)}`)
    .join(", ");
  return (
    `ssh: the host key of ${address} changed: it presented ${presented.type} ${fingerprint(presented.key)}, ` +
    `but CONFIRM pinned ${expected}. The connection was refused; if the machine was really rebuilt, delete and ` +
    `recreate the node.`
  );
}

/**
 * Host keys from OpenSSH public key lines (`<type> <base64> [comment]`, as in `ssh_host_*_key.pub`, in the block
 * cloud-init prints to the console, or in `known_hosts` after the host names). A line whose blob does not name the
 * type it is listed under is skipped, so a garbled line never pins a wrong key. Undefined when none is found.
 */
export function hostKeysFromPublicKeyLines(text: string): HostKeys | undefined {
  const keys: HostKeys = {};
  for (const line of text.split(/\r?\n/)) {
    const words = line.trim().split(/\s+/);
    for (let i = 0; i + 1 < words.length; i++) {
      const type = words[i]!;
      const base64 = words[i + 1]!;
      if (!/^(ssh-|ecdsa-|sk-)/.test(type) || !/^[A-Za-z0-9+/]+=*$/.test(base64)) continue;
      const presented = presentedHostKey(Buffer.from(base64, "base64"));
      if (presented.type === type) keys[type] = presented.key;
      break;
    }
  }
  return Object.keys(keys).length ? keys : undefined;
}
