import { isAbsolute, resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { Logger } from "@corral/shared";
import { createLdapHandler } from "./ldap-handler.js";
import { createRealmHandler } from "./realm-handler.js";
import type { AuthenticationHandler, HandlerFactory } from "./types.js";

/** What chooses and configures the authentication backend. */
export interface HandlerSpec {
  /** `security.authentication.handlerClassName`. */
  className: string;
  /** `security.authentication.loginmodule.className`: the custom module when the class name names JASPI. */
  loginModule: string;
  /** `security.authentication.basic.realmfile`. */
  realmFile: string;
  /** `security.authentication.handler.*` with the prefix removed. */
  properties: Readonly<Record<string, string>>;
  /** Relative module paths are resolved against this directory. */
  baseDir: string;
}

export type HandlerKind = "basic" | "ldap" | "custom";

/** Whether a name is a file path or URL rather than a backend name or a Java class name. */
function looksLikeModulePath(name: string): boolean {
  return /^(\.{1,2}\/|\/|file:)/.test(name) || /\.(m?js|cjs|ts|mts)$/.test(name);
}

/**
 * Which backend a class name selects: a file path or URL is a custom module; otherwise names containing
 * `LDAP` select LDAP, names containing `Basic` or `HashLogin` (Coopr's Java class names) and `basic` select the
 * realm file; `JASPI` names take the module from the login module class name; anything else is a module
 * specifier (a package name) of a custom handler.
 */
export function handlerKind(className: string, loginModule = ""): { kind: HandlerKind; module?: string } {
  const name = className.trim();
  if (!name || /^basic$/i.test(name)) return { kind: "basic" };
  if (looksLikeModulePath(name)) return { kind: "custom", module: name };
  if (/ldap/i.test(name)) return { kind: "ldap" };
  if (/basic|hashlogin/i.test(name)) return { kind: "basic" };
  if (/jaspi/i.test(name)) {
    if (!loginModule.trim()) {
      throw new Error("a JASPI handler needs security.authentication.loginmodule.className naming the custom module");
    }
    // Coopr paired JASPI with LDAP's Java login module; a path or package name is a custom handler.
    const module = loginModule.trim();
    return !looksLikeModulePath(module) && /ldap/i.test(module) ? { kind: "ldap" } : { kind: "custom", module };
  }
  return { kind: "custom", module: name };
}

/** Builds the configured backend; a custom module is imported and its factory called with the properties. */
export async function createHandler(spec: HandlerSpec, log: Logger): Promise<AuthenticationHandler> {
  const choice = handlerKind(spec.className, spec.loginModule);
  switch (choice.kind) {
    case "basic":
      return createRealmHandler(spec.realmFile && resolve(spec.baseDir, spec.realmFile), log);
    case "ldap":
      return createLdapHandler(spec.properties, log);
    case "custom":
      return loadCustomHandler(choice.module!, spec, log);
  }
}

async function loadCustomHandler(module: string, spec: HandlerSpec, log: Logger): Promise<AuthenticationHandler> {
  const specifier = module.startsWith("file:")
    ? module
    : looksLikeModulePath(module)
      ? pathToFileURL(isAbsolute(module) ? module : resolve(spec.baseDir, module)).href
      : module;
  let loaded: Record<string, unknown>;
  try {
    loaded = (await import(specifier)) as Record<string, unknown>;
  } catch (err) {
    throw new Error(`cannot load the authentication handler module ${module}: ${(err as Error).message}`, { cause: err });
  }
  const factory = [loaded["default"], loaded["createHandler"]].find((f) => typeof f === "function") as HandlerFactory | undefined;
  if (!factory) {
    throw new Error(`authentication handler module ${module} must export a factory (default export or createHandler)`);
  }
  const handlerLog = log.child({ handler: module });
  const handler = await factory(spec.properties, { log: (message, fields) => handlerLog.info(message, fields) });
  if (!handler || typeof handler.authenticate !== "function") {
    throw new Error(`the factory of authentication handler module ${module} must return { authenticate(user, password) }`);
  }
  return handler;
}
