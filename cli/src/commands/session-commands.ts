/** Logging in and out, tokens, and the profile file (`corral config ...`). */
import type { ReadStream } from "node:tty";
import { ExitCode, UsageError } from "../errors.js";
import { discoverTokenUrl, login, revoke } from "../http/token-server.js";
import { promptPassword } from "../settings/password-prompt.js";
import { PROFILE_KEYS, readProfileFile, writeProfileFile, type Profile } from "../settings/profile-file.js";
import { requireIdentity } from "../settings/settings.js";
import { renderFields } from "../output/table.js";
import { flag, stringOption, type Command, type CommandContext, type CommandInput } from "./command.js";

/** Changes the named profile of the profile file and writes it back. */
async function updateProfile(ctx: CommandContext, profile: string, change: (p: Profile) => Profile): Promise<void> {
  const file = await readProfileFile(ctx.profilePath);
  file.profiles[profile] = change(file.profiles[profile] ?? {});
  await writeProfileFile(ctx.profilePath, file);
}

async function passwordOf(ctx: CommandContext, input: CommandInput, user: string): Promise<string> {
  if (flag(input, "password-stdin")) {
    let text = "";
    for await (const chunk of ctx.stdin) text += chunk.toString();
    return text.replace(/\r?\n$/, "");
  }
  const fromEnv = ctx.env["CORRAL_PASSWORD"];
  if (fromEnv) return fromEnv;
  const stdin = ctx.stdin as ReadStream;
  if (!stdin.isTTY) throw new UsageError("no password: give --password-stdin, set CORRAL_PASSWORD, or run on a terminal");
  return promptPassword(stdin, ctx.stderr, `password for ${user}: `);
}

async function tokenUrlOf(ctx: CommandContext): Promise<string | undefined> {
  const settings = ctx.settings();
  return settings.tokenUrl ?? discoverTokenUrl(settings.url, requireIdentity(settings));
}

export const loginCommand: Command = {
  words: ["login"],
  summary: "get a token from the token server (GET /token) and store it in the profile",
  options: {
    "password-stdin": { type: "boolean", description: "read the password from stdin (else CORRAL_PASSWORD, else a prompt)" },
    extended: { type: "boolean", description: "a token of the extended lifetime (GET /extendedtoken)" },
    "any-tenant": { type: "boolean", description: "a token of the user in every tenant (default: bound to --tenant)" },
  },
  async run(ctx, input) {
    const settings = ctx.settings();
    const identity = requireIdentity(settings);
    const tokenUrl = await tokenUrlOf(ctx);
    if (tokenUrl === undefined) {
      ctx.stderr.write(`${settings.url} answers without a token (security is off): nothing to log in to\n`);
      return { exitCode: ExitCode.Ok };
    }
    const password = await passwordOf(ctx, input, identity.user);
    const issued = await login({
      tokenUrl,
      user: identity.user,
      password,
      ...(flag(input, "any-tenant") ? {} : { tenant: identity.tenant }),
      extended: flag(input, "extended"),
    });
    await updateProfile(ctx, settings.profile, (p) => ({ ...p, url: settings.url, ...identity, tokenUrl, token: issued.access_token }));
    const value = { profile: settings.profile, user: identity.user, tenant: identity.tenant, expiresInSeconds: issued.expires_in, tokenUrl };
    const summary = `logged in as ${identity.user} in tenant ${identity.tenant}; token stored in profile ${settings.profile} of ${ctx.profilePath} (valid ${issued.expires_in} s)`;
    return { result: { value, table: () => summary } };
  },
};

export const logoutCommand: Command = {
  words: ["logout"],
  summary: "revoke the stored token (DELETE /token) and remove it from the profile",
  async run(ctx) {
    const settings = ctx.settings();
    if (!settings.token) throw new UsageError("no token to log out with");
    const tokenUrl = await tokenUrlOf(ctx);
    if (tokenUrl !== undefined) await revoke(tokenUrl, settings.token);
    await updateProfile(ctx, settings.profile, ({ token: _token, ...rest }) => rest);
    return { result: { value: { profile: settings.profile }, table: () => `logged out; token removed from profile ${settings.profile}` } };
  },
};

export const revokeTokensCommand: Command = {
  words: ["tokens", "revoke"],
  summary: "revoke every token of a user (DELETE /tokens/{user}; the user itself or the superadmin)",
  args: ["<user>"],
  async run(ctx, input) {
    const settings = ctx.settings();
    if (!settings.token) throw new UsageError("revoking tokens needs a token: corral login first");
    const tokenUrl = await tokenUrlOf(ctx);
    if (tokenUrl === undefined) throw new UsageError(`${settings.url} answers without tokens (security is off)`);
    const user = input.positionals[0] ?? "";
    await revoke(tokenUrl, settings.token, user);
    return { result: { value: { user }, table: () => `every token of ${user} is revoked` } };
  },
};

export const tokenCommand: Command = {
  words: ["token"],
  summary: "print the token in effect (for curl: -H \"Authorization: Bearer $(corral token)\")",
  async run(ctx) {
    const token = ctx.settings().token;
    if (!token) throw new UsageError("no token: corral login, --token or CORRAL_TOKEN");
    return { result: { value: { token }, table: () => token } };
  },
};

export const configSetCommand: Command = {
  words: ["config", "set"],
  summary: "store --url, --user, --tenant, --token, --token-url in the profile (--profile, default the current one)",
  async run(ctx, input) {
    const given: Profile = {};
    for (const key of PROFILE_KEYS) {
      const value = stringOption(input, key === "tokenUrl" ? "token-url" : key);
      if (value !== undefined) given[key] = value;
    }
    if (Object.keys(given).length === 0) throw new UsageError("config set needs at least one of --url, --user, --tenant, --token, --token-url");
    const profile = ctx.settings().profile;
    await updateProfile(ctx, profile, (p) => ({ ...p, ...given }));
    return { result: { value: { profile, set: Object.keys(given) }, table: () => `profile ${profile}: set ${Object.keys(given).join(", ")}` } };
  },
};

export const configShowCommand: Command = {
  words: ["config", "show"],
  summary: "the settings in effect and where each comes from (flag, env, profile, default); the token masked",
  async run(ctx) {
    const s = ctx.settings();
    const masked = s.token ? `${s.token.slice(0, 6)}...(${s.token.length} chars)` : undefined;
    const value = { profile: s.profile, profileFile: ctx.profilePath, url: s.url, user: s.user, tenant: s.tenant, token: masked, tokenUrl: s.tokenUrl, sources: s.sources };
    const line = (key: keyof typeof s.sources, shown: string | undefined) => [key, shown === undefined ? "(not set)" : `${shown}  [${s.sources[key]}]`] as const;
    const table = () =>
      renderFields([
        ["profile", `${s.profile} (${ctx.profilePath})`],
        line("url", s.url),
        line("user", s.user),
        line("tenant", s.tenant),
        line("token", masked),
        line("tokenUrl", s.tokenUrl),
      ]);
    return { result: { value, table } };
  },
};

export const configUseCommand: Command = {
  words: ["config", "use"],
  summary: "make a profile the current one",
  args: ["<profile>"],
  async run(ctx, input) {
    const profile = input.positionals[0] ?? "";
    const file = await readProfileFile(ctx.profilePath);
    file.current = profile;
    file.profiles[profile] ??= {};
    await writeProfileFile(ctx.profilePath, file);
    return { result: { value: { current: profile }, table: () => `current profile: ${profile}` } };
  },
};
