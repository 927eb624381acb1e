import { BadRequestError } from "./errors.js";

/** A user name and password taken out of a URL's `user:password@` part (percent-decoded). */
export interface UrlCredentials {
  user: string;
  password: string;
}

/** Comma-separated server URLs with their credentials split off, for clients that take them apart. */
export interface ServerList {
  /** The URLs without `user:password@`. */
  servers: string[];
  /** The credentials every URL carried; undefined when none did. */
  credentials?: UrlCredentials;
}

/**
 * Splits `nats://user:password@host:port,nats://user:password@host2:port` into bare server URLs and one set of
 * credentials. URLs naming different credentials (or some naming none) are refused: a connection has one identity.
 */
export function splitServerList(urls: string): ServerList {
  const parts = urls
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  const split = parts.map(splitOne);
  const first = split[0]?.credentials;
  for (const { credentials } of split) {
    if (credentials?.user !== first?.user || credentials?.password !== first?.password) {
      throw new BadRequestError(`server URLs ${redactUrls(urls)} carry different credentials; give every URL the same user:password@`);
    }
  }
  return { servers: split.map((s) => s.server), ...(first ? { credentials: first } : {}) };
}

/** `scheme://user:secret@host` -> `scheme://user:***@host` for every comma-separated URL; safe to log. */
export function redactUrls(urls: string): string {
  // A user info without a colon may be a token (`nats://<token>@host`): all of it goes.
  return urls.replace(/\/\/([^/@,\s]*)@/g, (_all, userInfo: string) => {
    const colon = userInfo.indexOf(":");
    return colon < 0 ? "//***@" : `//${userInfo.slice(0, colon)}:***@`;
  });
}

function splitOne(url: string): { server: string; credentials?: UrlCredentials } {
  const m = /^([a-z][a-z0-9+.-]*:\/\/)?([^/@]*)@(.*)$/i.exec(url);
  if (!m) return { server: url };
  const [, scheme = "", userInfo = "", rest = ""] = m;
  const colon = userInfo.indexOf(":");
  const user = decode(colon < 0 ? userInfo : userInfo.slice(0, colon));
  const password = colon < 0 ? "" : decode(userInfo.slice(colon + 1));
  return { server: `${scheme}${rest}`, credentials: { user, password } };
}

function decode(part: string): string {
  try {
    return decodeURIComponent(part);
  } catch {
    throw new BadRequestError("a server URL's user:password@ part is not valid percent-encoding");
  }
}

/** `scheme://host:port` with `user:password@` put in (percent-encoded), in every URL of a comma-separated list. */
export function withUrlCredentials(urls: string, credentials: UrlCredentials): string {
  const userInfo = `${encodeURIComponent(credentials.user)}:${encodeURIComponent(credentials.password)}@`;
  const withOne = (url: string): string => {
    const m = /^([a-z][a-z0-9+.-]*:\/\/)(.*)$/i.exec(url);
    return m ? `${m[1]}${userInfo}${m[2]}` : `${userInfo}${url}`;
  };
  return urls
    .split(",")
    .map((u) => withOne(u.trim()))
    .join(",");
}
