import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Json, JsonObject } from "@corral/provisioner/sdk";
import type { LxdEndpoint } from "./lxd-api.js";

export type InstanceType = "container" | "virtual-machine";
export type KeyDelivery = "cloud-init" | "file";

/** Where a provider's instances go and how they are made, from its admin fields. */
export interface LxdSettings {
  endpoint: LxdEndpoint;
  project: string;
  profiles: string[];
  /** Managed network of eth0; undefined: the profiles' NIC. */
  network?: string;
  /** Pool of the root disk; undefined: the profiles' root disk. */
  storagePool?: string;
  instanceType: InstanceType;
  /** undefined: the image type's `sshuser`, else root. */
  sshUser?: string;
  keyDelivery: KeyDelivery;
}

export const DEFAULT_IMAGE = "corral/node-bookworm";

/** Debian's lxd package, then the snap: the first whose socket exists, else Debian's. */
const SOCKET_CANDIDATES = ["/var/snap/lxd/common/lxd/unix.socket", "/var/lib/lxd/unix.socket"];

/**
 * The local LXD's socket: `LXD_SOCKET`, else `$LXD_DIR/unix.socket`, else the snap's or Debian's socket,
 * whichever exists (Debian's when neither does).
 */
export function defaultSocketPath(env: Readonly<Record<string, string | undefined>> = process.env, exists: (path: string) => boolean = existsSync): string {
  const socket = env["LXD_SOCKET"]?.trim();
  if (socket) return socket;
  const dir = env["LXD_DIR"]?.trim();
  if (dir) return join(dir, "unix.socket");
  return SOCKET_CANDIDATES.find(exists) ?? SOCKET_CANDIDATES[1]!;
}

export type ParsedSettings = { ok: true; settings: LxdSettings } | { ok: false; error: string };

export function lxdSettings(fields: JsonObject, defaultSocket: string): ParsedSettings {
  const url = text(fields["url"]);
  let endpoint: LxdEndpoint;
  if (url) {
    if (!/^https:\/\/[^/]+\/?$/.test(url)) return { ok: false, error: `url "${url}" is not https://host[:port]` };
    const clientCert = text(fields["client_cert"]);
    const clientKey = text(fields["client_key"]);
    if (!clientCert || !clientKey) return { ok: false, error: "a remote LXD (url) needs client_cert and client_key" };
    const serverCert = text(fields["server_cert"]);
    endpoint = { kind: "https", url: url.replace(/\/$/, ""), clientCert, clientKey, ...(serverCert ? { serverCert } : {}) };
  } else {
    endpoint = { kind: "unix", socketPath: text(fields["socket_path"]) || defaultSocket };
  }
  const instanceType = text(fields["instance_type"]) || "container";
  if (instanceType !== "container" && instanceType !== "virtual-machine") {
    return { ok: false, error: `instance_type "${instanceType}" is neither container nor virtual-machine` };
  }
  const keyDelivery = text(fields["key_delivery"]) || "cloud-init";
  if (keyDelivery !== "cloud-init" && keyDelivery !== "file") {
    return { ok: false, error: `key_delivery "${keyDelivery}" is neither cloud-init nor file` };
  }
  const profiles = (text(fields["profiles"]) || "default")
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  const network = text(fields["network"]);
  const storagePool = text(fields["storage_pool"]);
  const sshUser = text(fields["ssh_user"]);
  return {
    ok: true,
    settings: {
      endpoint,
      project: text(fields["project"]) || "default",
      profiles,
      ...(network ? { network } : {}),
      ...(storagePool ? { storagePool } : {}),
      instanceType,
      ...(sshUser ? { sshUser } : {}),
      keyDelivery,
    },
  };
}

/** The client cache key of an endpoint and project: every field, so changed credentials get a client of their own. */
export function clientKey(settings: Pick<LxdSettings, "endpoint" | "project">): string {
  return JSON.stringify([settings.endpoint, settings.project]);
}

const text = (value: Json | undefined) => (typeof value === "string" ? value.trim() : "");
