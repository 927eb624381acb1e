/**
 * The machines behind the emulator's instances: containers of the project's node image (corral/node:bookworm, sshd
 * with the keys and user of its environment), on a Docker network of the emulator's own (the VPC), reachable from
 * this machine at their container addresses. A public address is the container's address on a second network.
 */
import { NODE_IMAGE } from "@corral/deploy";
import { DockerClient, defaultSocketPath } from "@corral/provisioner/testing";
import { docker } from "../docker-demo.js";
import { createTestNetwork, dockerExec, ensureDockerForTests, TEST_LABEL, type TestNetwork } from "../docker-hosts.js";

/** What an instance's machine is started with. */
export interface MachineSpec {
  instanceId: string;
  /** Docker image the AMI stands for. */
  image: string;
  hostname: string;
  domainname: string;
  /** Extra name on the VPC network (the instance's private DNS name), so the other instances resolve it. */
  alias: string;
  /** `authorized_keys` lines for the SSH user (and root). */
  authorizedKeys: string[];
  /** The login with passwordless sudo the image's init creates (`admin` on Debian's AMIs). */
  sshUser: string;
  /** Also attach it to the public network. */
  withPublicAddress: boolean;
}

export interface StartedMachine {
  containerId: string;
  privateIp: string;
  publicIp?: string;
}

export interface Machines {
  start(spec: MachineSpec): Promise<StartedMachine>;
  /** `/etc/ssh/ssh_host_*_key.pub` of a started machine, once its init has made them ("" until then). */
  hostKeyLines(containerId: string): Promise<string>;
  remove(containerId: string): Promise<void>;
  /** Removes every machine and network it made. */
  close(): Promise<void>;
}

/** Label of the emulator's containers (its id), beside the test helpers' `corral.test` labels. */
export const EMULATOR_LABEL = "corral.ec2emu";

/** Machines as containers of the node image; `id` names the emulator's networks and labels its containers. */
export async function dockerMachines(id: string): Promise<Machines> {
  await ensureDockerForTests();
  const client = new DockerClient({ socketPath: defaultSocketPath() });
  const vpc = await createTestNetwork(`corral-ec2emu-${id}`);
  let publicNetwork: Promise<TestNetwork> | undefined;
  const made = new Set<string>();
  const [testKey, testValue] = TEST_LABEL.split("=") as [string, string];

  return {
    async start(spec) {
      const containerId = await client.createContainer(`corral-ec2emu-${id}-${spec.instanceId}`, {
        Image: spec.image,
        Hostname: spec.hostname,
        Domainname: spec.domainname,
        Env: [`CORRAL_AUTHORIZED_KEYS=${spec.authorizedKeys.join("\n")}`, `CORRAL_SSH_USER=${spec.sshUser}`],
        Labels: { [testKey]: testValue, "corral.test.pid": String(process.pid), [EMULATOR_LABEL]: id, [`${EMULATOR_LABEL}.instance`]: spec.instanceId },
        HostConfig: { NetworkMode: vpc.name },
        NetworkingConfig: { EndpointsConfig: { [vpc.name]: { Aliases: [spec.alias] } } },
      });
      made.add(containerId);
      let pub: TestNetwork | undefined;
      if (spec.withPublicAddress) {
        pub = await (publicNetwork ??= createTestNetwork(`corral-ec2emu-${id}-public`));
        await docker(["network", "connect", pub.name, containerId]);
      }
      await client.startContainer(containerId);
      const networks = (await client.inspectContainer(containerId)).NetworkSettings.Networks ?? {};
      const privateIp = networks[vpc.name]?.IPAddress;
      if (!privateIp) throw new Error(`container ${containerId.slice(0, 12)} has no address on ${vpc.name}`);
      const publicIp = pub ? networks[pub.name]?.IPAddress : undefined;
      return { containerId, privateIp, ...(publicIp ? { publicIp } : {}) };
    },
    async hostKeyLines(containerId) {
      const read = await dockerExec(containerId, ["sh", "-c", "cat /etc/ssh/ssh_host_*_key.pub 2>/dev/null"]);
      return read.exitCode === 0 ? read.stdout : "";
    },
    async remove(containerId) {
      await client.removeContainer(containerId);
      made.delete(containerId);
    },
    async close() {
      for (const containerId of made) await client.removeContainer(containerId).catch(() => false);
      made.clear();
      for (const network of [vpc, ...(publicNetwork ? [await publicNetwork] : [])]) await network.remove();
    },
  };
}

export { NODE_IMAGE };
