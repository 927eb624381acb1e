import type { RunInstancesCommandInput } from "@aws-sdk/client-ec2";
import type { PluginContext, PluginOutcome } from "@corral/provisioner/sdk";
import type { Ec2Deps } from "./deps.js";
import { isEc2Code, type Ec2Api, type Ec2Instance } from "./ec2-api.js";
import { liveNodeInstances } from "./instances.js";
import { ensureClusterKeyPair, forgetKeyPair } from "./key-pairs.js";
import { clientToken, instanceTags, TAG } from "./naming.js";
import { loginUser, readSettings, type Ec2Settings } from "./settings.js";

const failed = (message: string): PluginOutcome => ({ status: 1, stderr: `ec2: ${message}\n` });

/**
 * CREATE: one instance per node, launched with the cluster's key pair, the node's tags and an idempotency token of
 * the dispatch. A node never has two live instances: a pending or running one of the node (an earlier dispatch
 * whose result was lost) is adopted, a stopped one is terminated before a new launch, and a redelivered dispatch
 * (the provisioner killed mid-call) gets the instance its first run launched from the token.
 */
export async function createNode(ctx: PluginContext, deps: Ec2Deps): Promise<PluginOutcome> {
  const { task, signal } = ctx;
  const read = readSettings(task);
  if (!read.ok) return failed(read.error);
  const { settings } = read;
  const imageId = task.config.image?.trim();
  if (!imageId) return failed(`image type ${task.config.imagetype} maps no AMI id (field image) for provider ${task.config.provider?.name}`);
  const instanceType = task.config.flavor?.trim();
  if (!instanceType) return failed(`hardware type ${task.config.hardwaretype} maps no instance type (field flavor) for provider ${task.config.provider?.name}`);
  const api = deps.api(settings);

  const live = await liveNodeInstances(api, deps.installation, task, signal);
  const running = live.filter((i) => i.state === "pending" || i.state === "running");
  const [adopted, ...extra] = running;
  const stale = [...extra, ...live.filter((i) => i.state === "stopping" || i.state === "stopped")];
  if (stale.length) {
    // Stopped instances and duplicates would make two machines of one node: they go before anything else.
    await api.terminateInstances(stale.map((i) => i.id), signal);
    ctx.log.warn("ec2: extra instances of a node terminated", { nodeId: task.nodeId, instances: stale.map((i) => `${i.id} (${i.state})`) });
  }
  let instance: Ec2Instance;
  let how: "launched" | "adopted";
  if (adopted) {
    instance = adopted;
    how = "adopted";
  } else {
    instance = await launch(ctx, deps, api, settings, imageId, instanceType);
    how = "launched";
  }
  ctx.log.info("ec2: the node has its instance", { nodeId: task.nodeId, instance: instance.id, how, state: instance.state });
  return {
    status: 0,
    stdout: `ec2: instance ${instance.id} (${instanceType}, ${imageId}) of node ${task.config.hostname} ${how}, ${instance.state}, in ${api.where}\n`,
    result: { providerid: instance.id, "ssh-auth": { user: loginUser(task, settings), cluster_key: true } },
  };
}

async function launch(ctx: PluginContext, deps: Ec2Deps, api: Ec2Api, settings: Ec2Settings, imageId: string, instanceType: string): Promise<Ec2Instance> {
  const { task, signal } = ctx;
  const userData = settings.userKeyName ? await userKeyData(api, settings.userKeyName, signal) : undefined;
  for (let attempt = 1; ; attempt++) {
    const keyName = await ensureClusterKeyPair(api, deps.clusterKeys, deps.installation, task.tenant, task.clusterId, signal);
    const input: RunInstancesCommandInput = {
      ImageId: imageId,
      InstanceType: instanceType as RunInstancesCommandInput["InstanceType"],
      MinCount: 1,
      MaxCount: 1,
      KeyName: keyName,
      ClientToken: clientToken(deps.installation, task),
      TagSpecifications: [{ ResourceType: "instance", Tags: instanceTags(deps.installation, task) }],
      ...placement(settings),
      ...(userData ? { UserData: Buffer.from(userData).toString("base64") } : {}),
    };
    try {
      const instance = await api.runInstance(input, signal);
      if (instance.tags[TAG.node] !== task.nodeId) {
        // Some EC2-compatible clouds ignore TagSpecifications: the tags the provider finds its instances by are set now.
        const tags = instanceTags(deps.installation, task);
        await api.createTags([instance.id], tags, signal);
        instance.tags = Object.fromEntries(tags.map((t) => [t.Key, t.Value]));
      }
      return instance;
    } catch (err) {
      // The pair was removed behind this process's back (another provisioner's last DELETE of the cluster): import it again.
      if (!isEc2Code(err, "InvalidKeyPair.NotFound") || attempt > 1) throw err;
      forgetKeyPair(api, keyName);
    }
  }
}

/** Subnet and security groups; with `associate_public_ip` set they go on the primary network interface, as EC2 requires. */
function placement(settings: Ec2Settings): Partial<RunInstancesCommandInput> {
  const groups = settings.securityGroupIds;
  if (settings.associatePublicIp === undefined) {
    return { ...(settings.subnetId ? { SubnetId: settings.subnetId } : {}), ...(groups.length ? { SecurityGroupIds: groups } : {}) };
  }
  return {
    NetworkInterfaces: [
      {
        DeviceIndex: 0,
        AssociatePublicIpAddress: settings.associatePublicIp,
        DeleteOnTermination: true,
        ...(settings.subnetId ? { SubnetId: settings.subnetId } : {}),
        ...(groups.length ? { Groups: groups } : {}),
      },
    ],
  };
}

/** cloud-config letting the user's own key pair in beside the cluster's. */
async function userKeyData(api: Ec2Api, keyName: string, signal: AbortSignal): Promise<string> {
  const pair = await api.describeKeyPair(keyName, signal);
  if (!pair) throw new UserKeyError(`your key pair ${keyName} (provider field key_name) does not exist in ${api.where}`);
  if (!pair.publicKey) throw new UserKeyError(`EC2 does not return the public key of key pair ${keyName}, so it cannot be let in`);
  return `#cloud-config\nssh_authorized_keys:\n  - ${JSON.stringify(pair.publicKey.trim())}\n`;
}

/** A user's key pair that cannot be used: the task fails with this message. */
export class UserKeyError extends Error {
  override readonly name = "UserKeyError";
}
