import { HostListError, parseHostEntry, type HostEntry } from "@corral/shared";
import { parseSshAuth, type SshAuth } from "../../ssh/node-target.js";
import type { PluginContext } from "../types.js";

export type NodeHost = { ok: true; entry: HostEntry; auth: SshAuth } | { ok: false; error: string };

/** The host and `ssh-auth` CREATE recorded in the node's results. */
export function nodeHost(ctx: PluginContext): NodeHost {
  const { results } = ctx.task.config;
  const providerid = results?.["providerid"];
  const auth = parseSshAuth(results?.["ssh-auth"]);
  if (typeof providerid !== "string" || !auth) return { ok: false, error: `node ${ctx.task.nodeId} has no host from CREATE` };
  try {
    return { ok: true, entry: parseHostEntry(providerid), auth };
  } catch (err) {
    if (err instanceof HostListError) return { ok: false, error: `node ${ctx.task.nodeId}: ${err.message}` };
    throw err;
  }
}
