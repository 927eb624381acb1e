import { AndFilter, Client, EqualityFilter, InvalidCredentialsError, type Filter } from "ldapts";
import type { Logger } from "@corral/shared";
import type { AuthenticationHandler } from "./types.js";

/**
 * LDAP authentication through ldapts, configured by the `security.authentication.handler.*` properties
 * (docs/security.md; names compared case-insensitively; environment variables arrive lower-cased):
 *
 * | property | default | use |
 * |---|---|---|
 * | `hostname` | required | LDAP host; an `ldap://` or `ldaps://` URL is also accepted |
 * | `port` | 389 (636 with `useLdaps`) | LDAP port |
 * | `useLdaps` | false | connect with TLS (ldaps) |
 * | `userBaseDn` | required | where users live |
 * | `userRdnAttribute` | `uid` | builds the user DN `<attr>=<user>,<userBaseDn>` when there is no `bindDn` |
 * | `userIdAttribute` | `userRdnAttribute` | attribute holding the login name, searched for when `bindDn` is set |
 * | `userObjectClass` | none | when set, the user entry must have this object class |
 * | `bindDn`, `bindPassword` | none | a service account: find the user by search, then bind as the found DN |
 * | `userPasswordAttribute` | `userPassword` | accepted for compatibility; the password is always checked by binding as the user, which works with hashed passwords and ACLs that hide them |
 * | `roleBaseDn` | none | where groups live; without it users have no roles |
 * | `roleObjectClass` | `groupOfNames` | object class of a group |
 * | `roleMemberAttribute` | `member` | attribute listing members (by DN; `memberUid` lists user names) |
 * | `roleNameAttribute` | `cn` | attribute whose values are the role names |
 * | `debug` | false | log each step (DNs and counts, never passwords) |
 * | `timeoutMs` | 5000 | connect and operation timeout |
 */
export interface LdapSettings {
  url: string;
  userBaseDn: string;
  userRdnAttribute: string;
  userIdAttribute: string;
  userObjectClass?: string;
  bindDn?: string;
  bindPassword?: string;
  userPasswordAttribute: string;
  roleBaseDn?: string;
  roleObjectClass: string;
  roleMemberAttribute: string;
  roleNameAttribute: string;
  debug: boolean;
  timeoutMs: number;
}

/** Reads the handler properties into checked settings; a missing required property names itself. */
export function ldapSettings(properties: Readonly<Record<string, string>>): LdapSettings {
  const lower = new Map(Object.entries(properties).map(([k, v]) => [k.toLowerCase(), v.trim()]));
  const get = (name: string): string | undefined => lower.get(name.toLowerCase()) || undefined;
  const need = (name: string): string => {
    const value = get(name);
    if (!value) throw new Error(`security.authentication.handler.${name} is required for LDAP authentication`);
    return value;
  };
  const flag = (name: string): boolean => /^(true|1|yes)$/i.test(get(name) ?? "");
  const hostname = need("hostname");
  const useLdaps = flag("useLdaps");
  let url: string;
  if (/^ldaps?:\/\//i.test(hostname)) url = hostname;
  else {
    const port = Number(get("port") ?? (useLdaps ? 636 : 389));
    if (!Number.isInteger(port) || port <= 0 || port > 65535) {
      throw new Error(`security.authentication.handler.port must be a port number, got ${get("port")}`);
    }
    const host = hostname.includes(":") && !hostname.startsWith("[") ? `[${hostname}]` : hostname;
    url = `${useLdaps ? "ldaps" : "ldap"}://${host}:${port}`;
  }
  const rdn = get("userRdnAttribute") ?? "uid";
  const timeoutMs = Number(get("timeoutMs") ?? 5000);
  return {
    url,
    userBaseDn: need("userBaseDn"),
    userRdnAttribute: rdn,
    userIdAttribute: get("userIdAttribute") ?? rdn,
    userObjectClass: get("userObjectClass"),
    bindDn: get("bindDn"),
    bindPassword: get("bindPassword"),
    userPasswordAttribute: get("userPasswordAttribute") ?? "userPassword",
    roleBaseDn: get("roleBaseDn"),
    roleObjectClass: get("roleObjectClass") ?? "groupOfNames",
    roleMemberAttribute: get("roleMemberAttribute") ?? "member",
    roleNameAttribute: get("roleNameAttribute") ?? "cn",
    debug: flag("debug"),
    timeoutMs: Number.isFinite(timeoutMs) && timeoutMs > 0 ? timeoutMs : 5000,
  };
}

/** Escapes an RDN attribute value (RFC 4514 section 2.4). */
export function escapeDnValue(value: string): string {
  let out = value.replace(/[\\,+"<>;=]/g, (c) => `\\${c}`).replace(/\u0000/g, "\\00");
  if (out.startsWith("#") || out.startsWith(" ")) out = `\\${out}`;
  if (out.endsWith(" ") && out.length > 1) out = `${out.slice(0, -1)}\\ `;
  return out;
}

export function createLdapHandler(properties: Readonly<Record<string, string>>, log: Logger): AuthenticationHandler {
  const s = ldapSettings(properties);
  const debug = (msg: string, fields?: Record<string, unknown>): void => {
    if (s.debug) log.info(`ldap: ${msg}`, fields);
  };
  const newClient = () => new Client({ url: s.url, timeout: s.timeoutMs, connectTimeout: s.timeoutMs });
  const withObjectClass = (cls: string | undefined, filter: Filter): Filter =>
    cls ? new AndFilter({ filters: [new EqualityFilter({ attribute: "objectClass", value: cls }), filter] }) : filter;

  return {
    async authenticate(user, password) {
      // An empty password would be an unauthenticated simple bind, which LDAP servers accept (RFC 4513 5.1.2).
      if (!user || !password) return null;
      const userClient = newClient();
      const serviceClient = s.bindDn ? newClient() : undefined;
      try {
        let userDn: string;
        if (serviceClient) {
          await serviceClient.bind(s.bindDn!, s.bindPassword ?? "");
          const filter = withObjectClass(s.userObjectClass, new EqualityFilter({ attribute: s.userIdAttribute, value: user }));
          const { searchEntries } = await serviceClient.search(s.userBaseDn, { scope: "sub", filter, attributes: ["dn"] });
          debug("user search", { base: s.userBaseDn, filter: filter.toString(), found: searchEntries.length });
          if (searchEntries.length !== 1) return null;
          userDn = searchEntries[0]!.dn;
        } else {
          userDn = `${s.userRdnAttribute}=${escapeDnValue(user)},${s.userBaseDn}`;
        }
        try {
          await userClient.bind(userDn, password);
        } catch (err) {
          if (err instanceof InvalidCredentialsError || (err as { code?: number }).code === 0x31) {
            debug("bind refused", { dn: userDn });
            return null;
          }
          throw err;
        }
        debug("bound", { dn: userDn });
        const reader = serviceClient ?? userClient;
        if (!serviceClient && s.userObjectClass) {
          const { searchEntries } = await reader.search(userDn, {
            scope: "base",
            filter: new EqualityFilter({ attribute: "objectClass", value: s.userObjectClass }),
            attributes: ["dn"],
          });
          if (searchEntries.length === 0) {
            debug("entry lacks the user object class", { dn: userDn, objectClass: s.userObjectClass });
            return null;
          }
        }
        const roles: string[] = [];
        if (s.roleBaseDn) {
          const member = s.roleMemberAttribute.toLowerCase() === "memberuid" ? user : userDn;
          const filter = withObjectClass(s.roleObjectClass, new EqualityFilter({ attribute: s.roleMemberAttribute, value: member }));
          const { searchEntries } = await reader.search(s.roleBaseDn, {
            scope: "sub",
            filter,
            attributes: [s.roleNameAttribute],
          });
          for (const entry of searchEntries) {
            const value = entry[s.roleNameAttribute] ?? findAttribute(entry, s.roleNameAttribute);
            for (const v of Array.isArray(value) ? value : [value]) {
              if (v !== undefined) roles.push(Buffer.isBuffer(v) ? v.toString("utf8") : String(v));
            }
          }
          debug("roles", { dn: userDn, base: s.roleBaseDn, filter: filter.toString(), roles });
        }
        return { roles };
      } finally {
        await Promise.allSettled([userClient.unbind(), serviceClient?.unbind()]);
      }
    },
  };
}

/** Attribute names in search entries keep the server's spelling; find one case-insensitively. */
function findAttribute(entry: Record<string, unknown>, name: string): unknown {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === name.toLowerCase());
  return key === undefined ? undefined : entry[key];
}
