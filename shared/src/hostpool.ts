import { isIP } from "node:net";
import { kvKey } from "@corral/contracts";

/**
 * The `hostpool` provider hands out machines that already exist. Its provider field `hosts` lists them; a host
 * taken by a node has a key in bucket `corral_hostpool` (`kvKey(tenant, provider, host)`), a free one has none.
 * The provisioner (allocation) and tenancy (the REST view) both read these, so the format lives here.
 */

export const HOSTPOOL_PROVIDER_TYPE = "hostpool";
export const DEFAULT_SSH_PORT = 22;

/** One entry of a provider's `hosts` field. */
export interface HostEntry {
  /** `user@` of the entry, when given. */
  user?: string;
  /** Host name, IPv4 or IPv6 address, as listed (IPv6 without brackets). */
  address: string;
  port: number;
  /** The host's identity in the pool: `address:port`, IPv6 as `[address]:port`. */
  host: string;
}

/** A `hosts` entry that cannot be read; the message names the entry. */
export class HostListError extends Error {
  override readonly name = "HostListError";
  constructor(
    readonly entry: string,
    problem: string,
  ) {
    super(`hosts entry "${entry}" ${problem} (expected [user@]address[:port], IPv6 as [address]:port)`);
  }
}

const HOSTNAME = /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*\.?$/;
const USER = /^[A-Za-z0-9._][A-Za-z0-9._-]{0,31}$/;

export const hostId = (address: string, port: number) => (address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`);

/** Reads one `[user@]address[:port]` entry (also a bare IPv6 address, which cannot carry a port). */
export function parseHostEntry(raw: string): HostEntry {
  const entry = raw.trim();
  const at = entry.lastIndexOf("@");
  const user = at >= 0 ? entry.slice(0, at) : undefined;
  if (user !== undefined && !USER.test(user)) throw new HostListError(entry, `has an invalid user "${user}"`);
  const rest = at >= 0 ? entry.slice(at + 1) : entry;
  let address: string;
  let portText: string | undefined;
  if (rest.startsWith("[")) {
    const close = rest.indexOf("]");
    if (close < 0) throw new HostListError(entry, "has no closing ]");
    address = rest.slice(1, close);
    const after = rest.slice(close + 1);
    if (after !== "" && !after.startsWith(":")) throw new HostListError(entry, `has "${after}" after the address`);
    portText = after === "" ? undefined : after.slice(1);
    if (isIP(address) !== 6) throw new HostListError(entry, `has "${address}" in brackets, which is not an IPv6 address`);
  } else if (rest.indexOf(":") !== rest.lastIndexOf(":")) {
    address = rest;
    if (isIP(address) !== 6) throw new HostListError(entry, "is not an address (an IPv6 address with a port goes in brackets)");
  } else {
    const colon = rest.indexOf(":");
    address = colon < 0 ? rest : rest.slice(0, colon);
    portText = colon < 0 ? undefined : rest.slice(colon + 1);
    if (!isIP(address) && (!HOSTNAME.test(address) || /^[\d.]+$/.test(address))) throw new HostListError(entry, `has an invalid address "${address}"`);
  }
  let port = DEFAULT_SSH_PORT;
  if (portText !== undefined) {
    port = /^\d{1,5}$/.test(portText) ? Number(portText) : NaN;
    if (!(port >= 1 && port <= 65535)) throw new HostListError(entry, `has an invalid port "${portText}"`);
  }
  return { ...(user !== undefined ? { user } : {}), address, port, host: hostId(address, port) };
}

/** Reads a whole `hosts` field: entries separated by commas (and/or whitespace); each host at most once. */
export function parseHostList(text: string): HostEntry[] {
  const entries = text
    .split(/[\s,]+/)
    .filter(Boolean)
    .map(parseHostEntry);
  const seen = new Set<string>();
  for (const e of entries) {
    if (seen.has(e.host)) throw new HostListError(e.host, "is listed twice");
    seen.add(e.host);
  }
  return entries;
}

/** Key of one host's allocation. */
export const hostAllocationKey = (tenant: string, provider: string, host: string) => kvKey(tenant, provider, host);

/** Filter matching every allocation key of one provider of one tenant. */
export const hostAllocationFilter = (tenant: string, provider: string) => `${kvKey(tenant, provider)}.*`;
