import { BlockList, isIP } from "node:net";

/**
 * Which addresses a webhook may be delivered to. Refused unless the operator allows their network
 * (`webhooks.allowedNetworks`): loopback, link-local (cloud metadata services live there), private, shared
 * (carrier-grade NAT), multicast, reserved and unspecified addresses, in IPv4 and IPv6, IPv4 inside IPv6 included.
 */
export interface AddressPolicy {
  /** Why `address` (an IP literal) is refused; undefined when a delivery may go there. */
  refusalOf(address: string): string | undefined;
}

const REFUSED_V4: ReadonlyArray<[string, number, string]> = [
  ["0.0.0.0", 8, "an unspecified address"],
  ["10.0.0.0", 8, "a private address"],
  ["100.64.0.0", 10, "a shared (carrier-grade NAT) address"],
  ["127.0.0.0", 8, "a loopback address"],
  ["169.254.0.0", 16, "a link-local or metadata address"],
  ["172.16.0.0", 12, "a private address"],
  ["192.0.0.0", 24, "a reserved address"],
  ["192.168.0.0", 16, "a private address"],
  ["198.18.0.0", 15, "a reserved address"],
  ["224.0.0.0", 4, "a multicast address"],
  ["240.0.0.0", 4, "a reserved address"],
];
const REFUSED_V6: ReadonlyArray<[string, number, string]> = [
  ["::", 128, "an unspecified address"],
  ["::1", 128, "a loopback address"],
  ["fc00::", 7, "a private address"],
  ["fe80::", 10, "a link-local address"],
  ["ff00::", 8, "a multicast address"],
];

/** The IPv4 address an IPv6 address carries (`::ffff:a.b.c.d`, NAT64 `64:ff9b::a.b.c.d`), if it carries one. */
function embeddedV4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted) return dotted[1];
  const hex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (!hex) return undefined;
  const high = parseInt(hex[1]!, 16);
  const low = parseInt(hex[2]!, 16);
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}

/** `10.1.0.0/16`, `fd00::/8` or a single address; throws on anything else. */
function parseCidr(text: string): { address: string; prefix: number; family: "ipv4" | "ipv6" } {
  const [address = "", bits] = text.trim().split("/");
  const version = isIP(address);
  if (version === 0) throw new Error(`webhooks.allowedNetworks: ${JSON.stringify(text)} is no CIDR network`);
  const max = version === 4 ? 32 : 128;
  const prefix = bits === undefined ? max : Number(bits);
  if (!Number.isInteger(prefix) || prefix < 0 || prefix > max || (bits !== undefined && !/^\d+$/.test(bits))) {
    throw new Error(`webhooks.allowedNetworks: ${JSON.stringify(text)} has no prefix length of 0 to ${max}`);
  }
  return { address, prefix, family: version === 4 ? "ipv4" : "ipv6" };
}

/** The networks of a `webhooks.allowedNetworks` value: CIDRs separated by commas or spaces. */
export function parseAllowedNetworks(setting: string): string[] {
  const networks = setting.split(/[\s,]+/).filter((n) => n !== "");
  for (const network of networks) parseCidr(network);
  return networks;
}

export function addressPolicy(allowedNetworks: readonly string[] = []): AddressPolicy {
  const allowed = new BlockList();
  for (const network of allowedNetworks) {
    const { address, prefix, family } = parseCidr(network);
    allowed.addSubnet(address, prefix, family);
  }
  const refused = new Map<string, { list: BlockList; why: string }>();
  const listOf = (why: string) => {
    let entry = refused.get(why);
    if (!entry) refused.set(why, (entry = { list: new BlockList(), why }));
    return entry.list;
  };
  for (const [address, prefix, why] of REFUSED_V4) listOf(why).addSubnet(address, prefix, "ipv4");
  for (const [address, prefix, why] of REFUSED_V6) listOf(why).addSubnet(address, prefix, "ipv6");
  const check = (address: string, family: "ipv4" | "ipv6"): string | undefined => {
    if (allowed.check(address, family)) return undefined;
    for (const { list, why } of refused.values()) if (list.check(address, family)) return why;
    return undefined;
  };
  return {
    refusalOf(address) {
      const version = isIP(address);
      if (version === 0) return "not an IP address";
      if (version === 4) {
        if (address === "255.255.255.255") return allowed.check(address, "ipv4") ? undefined : "a broadcast address";
        return check(address, "ipv4");
      }
      if (allowed.check(address, "ipv6")) return undefined;
      const v4 = embeddedV4(address);
      return v4 !== undefined ? check(v4, "ipv4") : check(address, "ipv6");
    },
  };
}

/** Host names that always name this machine, or a cloud's metadata service, whatever DNS says. */
const LOCAL_NAMES = /(^|\.)localhost\.?$/i;
const METADATA_NAMES = /^metadata(\.google\.internal)?\.?$/i;

/**
 * Why an endpoint URL is refused at registration (the checks its text allows: scheme, credentials, an IP literal
 * or a local name); undefined when it may be registered. Names are resolved again at each delivery.
 */
export function urlProblem(text: string, policy: AddressPolicy): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return "is no URL";
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return "must be an http or https URL";
  if (url.username !== "" || url.password !== "") return "may not hold credentials (the signature authenticates deliveries)";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (host === "") return "has no host";
  if (isIP(host) !== 0) {
    const refusal = policy.refusalOf(host);
    return refusal === undefined ? undefined : `points at ${refusal} (${host}), which webhooks may not reach`;
  }
  if (LOCAL_NAMES.test(host) && policy.refusalOf("127.0.0.1") !== undefined) return `names this machine (${host}), which webhooks may not reach`;
  if (METADATA_NAMES.test(host) && policy.refusalOf("169.254.169.254") !== undefined) return `names a metadata service (${host}), which webhooks may not reach`;
  return undefined;
}
