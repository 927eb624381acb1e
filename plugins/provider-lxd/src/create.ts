import type { PluginContext, PluginOutcome } from "@corral/provisioner/sdk";
import { USER_DATA_KEY, userData } from "./cloud-init.js";
import { nodeInstances, settleInstance, type LxdDeps } from "./instances.js";
import { flavorLimits } from "./limits.js";
import { isLxdStatus, LxdApiError, LxdOperationError, type Instance, type InstancesPost, type LxdClient } from "./lxd-api.js";
import { instanceName, isNodeInstance, nodeConfig } from "./naming.js";
import { DEFAULT_IMAGE, lxdSettings, type LxdSettings } from "./settings.js";

const failed = (message: string): PluginOutcome => ({ status: 1, stderr: `lxd: ${message}\n` });

/** The login user of a node: the provider's `ssh_user`, else the image type's `sshuser`, else root. */
export const sshUserOf = (settings: LxdSettings, ctx: PluginContext): string => settings.sshUser || ctx.task.config.sshuser?.trim() || "root";

/**
 * CREATE: one instance per node, started, that lets the cluster's key in. Idempotent: the instance's name is stable
 * for the node, so a redelivered CREATE (its provisioner killed mid-call) finds the instance the first one made, even
 * one LXD is still creating, and adopts it instead of making a second.
 */
export async function createNode(ctx: PluginContext, deps: LxdDeps, defaultSocket: string): Promise<PluginOutcome> {
  const { task, signal } = ctx;
  const parsed = lxdSettings(task.config.provider?.provisioner ?? {}, defaultSocket);
  if (!parsed.ok) return failed(parsed.error);
  const settings = parsed.settings;
  const limits = flavorLimits(task.config.flavor);
  if (!limits.ok) return failed(limits.error);
  const sshUser = sshUserOf(settings, ctx);
  if (settings.keyDelivery === "file" && sshUser !== "root") {
    return failed(`key_delivery file installs the key for root only; ssh_user ${sshUser} needs key_delivery cloud-init`);
  }
  const lxd = deps.client(settings);
  const wanted = instanceName(deps.installation, task, task.config.nodenum, task.config.hostname);

  const [existing] = await nodeInstances(lxd, deps, task, wanted, signal);
  let name = existing?.name ?? wanted;
  let how: "created" | "adopted" = "adopted";
  if (!existing) {
    const made = await makeInstance(ctx, deps, lxd, settings, wanted, sshUser, limits.config);
    if (!made.ok) return failed(made.error);
    name = made.name;
    how = made.how;
  }
  // A creation still going on (started by a CREATE whose provisioner died) ends before the instance is touched.
  await settleInstance(lxd, name, signal);
  const instance = await lxd.getInstance(name, signal);
  if (!instance || !isNodeInstance(instance, deps.installation, task)) return failed(`instance ${name} of node ${task.nodeId} vanished while it was created`);
  if (settings.keyDelivery === "file") await pushKey(ctx, deps, lxd, name);
  if (instance.status !== "Running") await lxd.waitOperation(await lxd.changeState(name, { action: "start" }, signal), signal);

  ctx.log.info("lxd: node instance started", { nodeId: task.nodeId, instance: name, how });
  return {
    status: 0,
    stdout: `lxd: instance ${name} of node ${task.config.hostname} ${how} and started on ${lxd.where}\n`,
    result: { providerid: name, "ssh-auth": { user: sshUser, cluster_key: true } },
  };
}

type Made = { ok: true; name: string; how: "created" | "adopted" } | { ok: false; error: string };

async function makeInstance(
  ctx: PluginContext,
  deps: LxdDeps,
  lxd: LxdClient,
  settings: LxdSettings,
  name: string,
  sshUser: string,
  limits: Record<string, string>,
): Promise<Made> {
  const { task, signal } = ctx;
  const image = task.config.image?.trim() || DEFAULT_IMAGE;
  const source = await imageSource(lxd, image, signal);
  if (!source) {
    const hint = image === DEFAULT_IMAGE ? "; build it with npm run lxd-image" : "";
    return { ok: false, error: `image ${image} is neither an image alias nor a fingerprint on ${lxd.where}${hint}` };
  }
  const key = await deps.clusterKeys.getOrCreate(task.tenant, task.clusterId);
  const config: Record<string, string> = { ...nodeConfig(deps.installation, task), ...limits };
  if (settings.keyDelivery === "cloud-init") config[USER_DATA_KEY] = userData(sshUser, key.publicKey);
  const devices: Record<string, Record<string, string>> = {};
  if (settings.network) devices["eth0"] = { type: "nic", name: "eth0", network: settings.network };
  if (settings.storagePool) devices["root"] = { type: "disk", path: "/", pool: settings.storagePool };
  const body: InstancesPost = {
    name,
    type: settings.instanceType,
    source: { type: "image", ...source },
    profiles: settings.profiles,
    config,
    devices,
    // With the key pushed through the file API, the instance starts only once the key is in place.
    start: settings.keyDelivery === "cloud-init",
    description: `Corral node ${task.config.hostname} (tenant ${task.tenant}, cluster ${task.clusterId})`,
  };
  try {
    await lxd.waitOperation(await lxd.createInstance(body, signal), signal);
    return { ok: true, name, how: "created" };
  } catch (err) {
    if (!isNameTaken(err)) {
      if (err instanceof LxdApiError || err instanceof LxdOperationError) return { ok: false, error: explain(err.message, body) };
      throw err;
    }
  }
  // The name is taken: by this node's instance (a concurrent CREATE of the node) it is adopted.
  const holder: Instance | undefined = await lxd.getInstance(name, signal);
  if (holder && isNodeInstance(holder, deps.installation, task)) return { ok: true, name, how: "adopted" };
  return { ok: false, error: `the instance name ${name} is taken by an instance that is not node ${task.nodeId}'s` };
}

/** LXD's ways of saying the name is taken: by an instance, or by the creation of one still going on. */
const isNameTaken = (err: unknown) =>
  isLxdStatus(err, 409) ||
  ((err instanceof LxdApiError || err instanceof LxdOperationError) && /already exists|already in use|busy running a "create" operation/i.test(err.lxdMessage));

/** LXD's message, with what the provider asked for when the message is about it. */
function explain(message: string, body: InstancesPost): string {
  const asked = Object.entries(body.config ?? {})
    .filter(([k]) => k.startsWith("limits."))
    .map(([k, v]) => `${k}=${v}`);
  return /limits/i.test(message) && asked.length ? `${message} (asked for ${asked.join(", ")})` : message;
}

/** An image alias, else an image fingerprint (or a unique prefix of one); undefined when it is neither. */
async function imageSource(lxd: LxdClient, image: string, signal?: AbortSignal): Promise<{ alias: string } | { fingerprint: string } | undefined> {
  if (await lxd.imageAlias(image, signal)) return { alias: image };
  if (/^[0-9a-f]{12,64}$/i.test(image) && (await lxd.hasImage(image, signal))) return { fingerprint: image.toLowerCase() };
  return undefined;
}

/** Root's authorized_keys with the cluster's public key, through LXD's file API (works while the container is stopped). */
async function pushKey(ctx: PluginContext, deps: LxdDeps, lxd: LxdClient, name: string): Promise<void> {
  const key = await deps.clusterKeys.getOrCreate(ctx.task.tenant, ctx.task.clusterId);
  await lxd.makeDirectory(name, "/root/.ssh", { uid: 0, gid: 0, mode: 0o700 }, ctx.signal);
  await lxd.writeFile(name, "/root/.ssh/authorized_keys", `${key.publicKey.trim()}\n`, { uid: 0, gid: 0, mode: 0o600 }, ctx.signal);
}
