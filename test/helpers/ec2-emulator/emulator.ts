/**
 * The emulator's account: instances, key pairs and idempotency tokens of one EC2 region, the actions the `ec2`
 * provider calls, and injected faults. Instances go pending -> running -> shutting-down -> terminated; each
 * running one is a machine (see machines.ts) whose console shows the host keys its init made.
 */
import { generateSshKeyPair } from "@corral/provisioner/testing";
import { list, filters, isTrue, matchesValue, tagSpecifications, tags, type Filter, type Params } from "./query.js";
import type { Machines } from "./machines.js";
import {
  DEFAULT_GROUP,
  DEFAULT_SUBNET,
  DEFAULT_VPC,
  keyFingerprint,
  keyPairXml,
  newInstanceId,
  newKeyPairId,
  newReservationId,
  privateDnsName,
  reservationXml,
  stateChangeXml,
  type Instance,
  type InstanceStateName,
  type KeyPair,
  type StateReason,
} from "./model.js";
import { items, type XmlObject } from "./xml.js";

/** An error EC2 answers with: its code, message and HTTP status. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** A fault of one or more coming API calls. */
export interface ApiFault {
  /** Only calls of this action. @default every action */
  action?: string;
  code: string;
  message: string;
  /** @default 400 */
  status?: number;
  /** How many matching calls fail. @default 1 */
  times?: number;
}

/** What happens to an instance launched while this fault is armed. */
export type LaunchFault =
  /** It never leaves pending (no machine is started). */
  | { kind: "stuck-pending" }
  /** It ends terminated before it ever runs, with this state reason. */
  | { kind: "terminated"; code: string; message: string }
  /** It runs, but its console shows no host keys, or keys that are not its own. */
  | { kind: "console"; keys: "none" | "foreign" };

export interface EmulatorSettings {
  region: string;
  /** AMI id -> Docker image. */
  images: Record<string, string>;
  sshUser: string;
  /** How long an instance stays pending before its machine starts, ms. */
  bootDelayMs: number;
  /** How long after running the console shows the host keys, ms. */
  consoleDelayMs: number;
  /** How long shutting-down lasts once the machine is gone, ms. */
  terminateDelayMs: number;
  /** Whether the default subnet gives instances a public address (EC2's MapPublicIpOnLaunch). */
  mapPublicIpOnLaunch: boolean;
  /**
   * EC2's eventual consistency: DescribeInstances does not show an instance until this long after its launch, ms
   * (asked for by id, it is InvalidInstanceID.NotFound meanwhile).
   */
  listingLagMs: number;
  /** Whether RunInstances applies TagSpecifications (some EC2-compatible clouds ignore them). */
  tagsOnLaunch: boolean;
}

/** A call as the emulator received it (for assertions: ClientToken, tags, credentials). */
export interface RecordedCall {
  action: string;
  params: Record<string, string>;
  accessKeyId: string;
  at: number;
}

const INSTANCE_FILTERS = new Set(["instance-id", "instance-state-name", "tag-key", "client-token", "key-name", "image-id", "instance-type"]);

export class EmulatedAccount {
  readonly instances = new Map<string, Instance>();
  readonly keyPairs = new Map<string, KeyPair>();
  readonly calls: RecordedCall[] = [];
  private readonly tokens = new Map<string, { reservationId: string; ids: string[]; fingerprint: string }>();
  private readonly apiFaults: Array<Required<Omit<ApiFault, "action">> & { action?: string }> = [];
  private readonly launchFaults: Array<{ fault: LaunchFault; remaining: number }> = [];
  private readonly boots = new Set<Promise<void>>();
  private closed = false;

  constructor(
    readonly settings: EmulatorSettings,
    private readonly machines: Machines,
    private readonly log: (line: string) => void,
  ) {}

  failNext(fault: ApiFault): void {
    this.apiFaults.push({ code: fault.code, message: fault.message, status: fault.status ?? 400, times: fault.times ?? 1, ...(fault.action ? { action: fault.action } : {}) });
  }

  nextLaunches(fault: LaunchFault, times = 1): void {
    this.launchFaults.push({ fault, remaining: times });
  }

  /** Throws the first armed fault matching `action`. */
  checkFaults(action: string): void {
    const fault = this.apiFaults.find((f) => f.times > 0 && (!f.action || f.action === action));
    if (!fault) return;
    fault.times--;
    throw new ApiError(fault.code, fault.message, fault.status);
  }

  /** Runs one action; the XML body of its response. */
  async handle(action: string, params: Params): Promise<XmlObject> {
    switch (action) {
      case "RunInstances":
        return this.runInstances(params);
      case "DescribeInstances":
        return this.describeInstances(params);
      case "TerminateInstances":
        return this.terminateInstances(list(params, "InstanceId"));
      case "ImportKeyPair":
        return this.importKeyPair(params);
      case "DeleteKeyPair":
        return this.deleteKeyPair(params);
      case "DescribeKeyPairs":
        return this.describeKeyPairs(params);
      case "GetConsoleOutput":
        return this.consoleOutput(params);
      case "CreateTags":
        return this.createTags(params);
      default:
        throw new ApiError("InvalidAction", `The action ${action} is not valid for this web service.`);
    }
  }

  private runInstances(p: Params): XmlObject {
    const imageId = required(p, "ImageId");
    const image = this.settings.images[imageId];
    if (!image) throw new ApiError("InvalidAMIID.NotFound", `The image id '[${imageId}]' does not exist`);
    const instanceType = p.get("InstanceType") ?? "m1.small";
    if (!/^[a-z][a-z0-9-]*\.[a-z0-9]+$/.test(instanceType)) throw new ApiError("InvalidParameterValue", `Invalid value '${instanceType}' for InstanceType.`);
    const count = Number(p.get("MaxCount") ?? "1");
    if (!Number.isInteger(count) || count < 1 || Number(p.get("MinCount") ?? "1") > count) {
      throw new ApiError("InvalidParameterValue", "MinCount and MaxCount must be positive integers with MinCount <= MaxCount.");
    }
    const keyName = p.get("KeyName");
    const keyPair = keyName === undefined ? undefined : this.keyPairs.get(keyName);
    if (keyName !== undefined && !keyPair) throw new ApiError("InvalidKeyPair.NotFound", `The key pair '${keyName}' does not exist`);

    const nic = p.has("NetworkInterface.1.DeviceIndex") || p.has("NetworkInterface.1.AssociatePublicIpAddress") ? "NetworkInterface.1" : undefined;
    if (nic && (p.has("SubnetId") || p.has("SecurityGroupId.1"))) {
      throw new ApiError("InvalidParameterCombination", "Network interfaces and an instance-level subnet ID or security groups may not be specified on the same request");
    }
    const subnetId = (nic ? p.get(`${nic}.SubnetId`) : p.get("SubnetId")) ?? DEFAULT_SUBNET;
    if (!subnetId.startsWith("subnet-")) throw new ApiError("InvalidSubnetID.NotFound", `The subnet ID '${subnetId}' does not exist`);
    const groups = list(p, nic ? `${nic}.SecurityGroupId` : "SecurityGroupId");
    const badGroup = groups.find((g) => !g.startsWith("sg-"));
    if (badGroup) throw new ApiError("InvalidGroup.NotFound", `The security group '${badGroup}' does not exist`);
    const wantsPublicIp = nic && p.has(`${nic}.AssociatePublicIpAddress`) ? isTrue(p.get(`${nic}.AssociatePublicIpAddress`)) : this.settings.mapPublicIpOnLaunch;

    const clientToken = p.get("ClientToken");
    const fingerprint = JSON.stringify([imageId, instanceType, keyName ?? "", count, subnetId]);
    const earlier = clientToken === undefined ? undefined : this.tokens.get(clientToken);
    if (earlier) {
      if (earlier.fingerprint !== fingerprint) {
        throw new ApiError("IdempotentParameterMismatch", `Arguments on this idempotent request are inconsistent with arguments used in previous request(s).`);
      }
      this.log(`RunInstances: client token ${clientToken} used before: reservation ${earlier.reservationId} again`);
      return reservationXml(earlier.reservationId, earlier.ids.map((id) => this.instances.get(id)!), this.settings.region);
    }

    const instanceTags = new Map<string, string>();
    if (this.settings.tagsOnLaunch) {
      for (const spec of tagSpecifications(p)) if (spec.resourceType === "instance") for (const t of spec.tags) instanceTags.set(t.key, t.value);
    }
    const userData = p.has("UserData") ? Buffer.from(p.get("UserData")!, "base64").toString("utf8") : undefined;
    const reservationId = newReservationId();
    const made: Instance[] = [];
    for (let launchIndex = 0; launchIndex < count; launchIndex++) {
      const id = newInstanceId();
      const instance: Instance = {
        id,
        reservationId,
        imageId,
        instanceType,
        ...(keyName !== undefined ? { keyName } : {}),
        ...(clientToken !== undefined ? { clientToken } : {}),
        subnetId,
        vpcId: DEFAULT_VPC,
        securityGroupIds: groups.length ? groups : [DEFAULT_GROUP],
        tags: new Map(instanceTags),
        state: "pending",
        reason: "",
        launchTime: new Date(Math.floor(Date.now() / 1000) * 1000),
        launchedAtMs: Date.now(),
        launchIndex,
        privateDnsName: privateDnsName(id, this.settings.region),
        wantsPublicIp,
        authorizedKeys: [...(keyPair ? [keyPair.publicKey] : []), ...userDataKeys(userData)],
        ...(userData !== undefined ? { userData } : {}),
        console: "",
      };
      this.instances.set(id, instance);
      made.push(instance);
      this.boot(instance, image, this.takeLaunchFault());
    }
    if (clientToken !== undefined) this.tokens.set(clientToken, { reservationId, ids: made.map((i) => i.id), fingerprint });
    this.log(`RunInstances: ${made.map((i) => i.id).join(", ")} (${imageId}, ${instanceType}) pending`);
    return reservationXml(reservationId, made, this.settings.region);
  }

  private takeLaunchFault(): LaunchFault | undefined {
    const armed = this.launchFaults.find((f) => f.remaining > 0);
    if (!armed) return undefined;
    armed.remaining--;
    return armed.fault;
  }

  /** pending -> running: starts the machine (unless a fault says otherwise) and writes the console. */
  private boot(instance: Instance, image: string, fault: LaunchFault | undefined): void {
    const run = async () => {
      await delay(this.settings.bootDelayMs);
      if (fault?.kind === "stuck-pending") return;
      if (instance.state !== "pending") return;
      if (fault?.kind === "terminated") {
        this.setState(instance, "terminated", { code: fault.code, message: fault.message }, `${fault.code}: ${fault.message}`);
        return;
      }
      const started = await this.machines.start({
        instanceId: instance.id,
        image,
        hostname: instance.id,
        domainname: instance.privateDnsName.slice(instance.id.length + 1),
        alias: instance.privateDnsName,
        authorizedKeys: instance.authorizedKeys,
        sshUser: this.settings.sshUser,
        withPublicAddress: instance.wantsPublicIp,
      });
      instance.containerId = started.containerId;
      if (instance.state !== "pending") {
        // Terminated while its machine was starting.
        await this.machines.remove(started.containerId);
        return;
      }
      instance.privateIp = started.privateIp;
      if (started.publicIp) instance.publicIp = started.publicIp;
      this.setState(instance, "running");
      instance.console = bootLog(instance);
      const keys = await this.hostKeys(instance, fault);
      await delay(this.settings.consoleDelayMs);
      // It may have been terminated meanwhile (a function call, as the compiler keeps the narrowed state across awaits).
      if (isRunning(instance)) instance.console += consoleKeyBlock(instance, keys);
    };
    const booting: Promise<void> = run()
      .catch((err: unknown) => {
        this.log(`${instance.id}: its machine did not start: ${String(err)}`);
        if (instance.state === "pending") {
          this.setState(instance, "terminated", { code: "Server.InternalError", message: "Server.InternalError: Internal error on launch" }, "Server.InternalError");
        }
      })
      .finally(() => this.boots.delete(booting));
    this.boots.add(booting);
  }

  /** The host keys the console shows: the machine's own (made by its init a moment after start), or a fault's. */
  private async hostKeys(instance: Instance, fault: LaunchFault | undefined): Promise<string> {
    if (fault?.kind === "console") return fault.keys === "none" ? "" : `${generateSshKeyPair().publicKey}\n`;
    for (let attempt = 0; attempt < 300 && instance.state === "running" && !this.closed; attempt++) {
      const lines = await this.machines.hostKeyLines(instance.containerId!);
      if (lines.trim()) return lines;
      await delay(100);
    }
    return "";
  }

  private setState(instance: Instance, state: InstanceStateName, reason?: StateReason, transition?: string): void {
    this.log(`${instance.id}: ${instance.state} -> ${state}${reason ? ` (${reason.code})` : ""}`);
    instance.state = state;
    if (reason) instance.stateReason = reason;
    if (transition !== undefined) instance.reason = transition;
  }

  private describeInstances(p: Params): XmlObject {
    const ids = list(p, "InstanceId");
    const listed = (i: Instance) => Date.now() - i.launchedAtMs >= this.settings.listingLagMs;
    for (const id of ids) if (!this.instances.has(id) || !listed(this.instances.get(id)!)) throw new ApiError("InvalidInstanceID.NotFound", `The instance ID '${id}' does not exist`);
    const wanted = filters(p);
    for (const f of wanted) {
      if (!INSTANCE_FILTERS.has(f.name) && !f.name.startsWith("tag:")) throw new ApiError("InvalidParameterValue", `The filter '${f.name}' is invalid`);
    }
    const found = [...this.instances.values()].filter((i) => listed(i) && (ids.length === 0 || ids.includes(i.id)) && wanted.every((f) => instanceMatches(i, f)));
    const byReservation = new Map<string, Instance[]>();
    for (const i of found) byReservation.set(i.reservationId, [...(byReservation.get(i.reservationId) ?? []), i]);
    return { reservationSet: items([...byReservation].map(([r, is]) => reservationXml(r, is, this.settings.region))) };
  }

  /** Terminates; already terminated instances stay so (idempotent), unknown ids fail the whole call as in EC2. */
  terminateInstances(ids: string[]): XmlObject {
    if (!ids.length) throw new ApiError("MissingParameter", "The request must contain the parameter InstanceId");
    for (const id of ids) if (!this.instances.has(id)) throw new ApiError("InvalidInstanceID.NotFound", `The instance ID '${id}' does not exist`);
    const changes = ids.map((id) => {
      const instance = this.instances.get(id)!;
      const previous = instance.state;
      if (previous !== "terminated" && previous !== "shutting-down") {
        this.setState(instance, "shutting-down", { code: "Client.UserInitiatedShutdown", message: "Client.UserInitiatedShutdown: User initiated shutdown" }, `User initiated (${gmt(new Date())})`);
        this.shutDown(instance);
      }
      return stateChangeXml(id, previous, instance.state);
    });
    return { instancesSet: items(changes) };
  }

  /** shutting-down -> terminated once the machine is gone. */
  private shutDown(instance: Instance): void {
    const run = async () => {
      if (instance.containerId) await this.machines.remove(instance.containerId);
      await delay(this.settings.terminateDelayMs);
      if (instance.state === "shutting-down") {
        this.setState(instance, "terminated");
        delete instance.privateIp;
        delete instance.publicIp;
      }
    };
    const stopping: Promise<void> = run()
      .catch((err: unknown) => this.log(`${instance.id}: its machine could not be removed: ${String(err)}`))
      .finally(() => this.boots.delete(stopping));
    this.boots.add(stopping);
  }

  private importKeyPair(p: Params): XmlObject {
    const name = required(p, "KeyName");
    const material = Buffer.from(required(p, "PublicKeyMaterial"), "base64").toString("utf8").trim();
    const m = /^(ssh-ed25519|ssh-rsa|ecdsa-sha2-nistp(?:256|384|521)) ([A-Za-z0-9+/]+=*)(?: .*)?$/.exec(material);
    if (!m) throw new ApiError("InvalidKey.Format", "Key is not in valid OpenSSH public key format");
    if (this.keyPairs.has(name)) throw new ApiError("InvalidKeyPair.Duplicate", `The keypair already exists`);
    const keyType = m[1] === "ssh-ed25519" ? "ed25519" : "rsa";
    const pair: KeyPair = {
      id: newKeyPairId(),
      name,
      publicKey: material,
      keyType,
      fingerprint: keyFingerprint(keyType, Buffer.from(m[2]!, "base64")),
      createTime: new Date(),
      tags: new Map(tagSpecifications(p).filter((s) => s.resourceType === "key-pair").flatMap((s) => s.tags.map((t) => [t.key, t.value] as const))),
    };
    this.keyPairs.set(name, pair);
    this.log(`ImportKeyPair: ${name}`);
    return { keyFingerprint: pair.fingerprint, keyName: name, keyPairId: pair.id, tagSet: pair.tags.size ? items([...pair.tags].map(([key, value]) => ({ key, value }))) : undefined };
  }

  /** As in EC2, deleting a key pair that does not exist succeeds. */
  private deleteKeyPair(p: Params): XmlObject {
    const name = p.get("KeyName") ?? [...this.keyPairs.values()].find((k) => k.id === p.get("KeyPairId"))?.name;
    const pair = name === undefined ? undefined : this.keyPairs.get(name);
    if (pair) {
      this.keyPairs.delete(pair.name);
      this.log(`DeleteKeyPair: ${pair.name}`);
    }
    return { return: true, keyPairId: pair?.id };
  }

  private describeKeyPairs(p: Params): XmlObject {
    const names = list(p, "KeyName");
    for (const n of names) if (!this.keyPairs.has(n)) throw new ApiError("InvalidKeyPair.NotFound", `The key pair '${n}' does not exist`);
    const wanted = filters(p);
    for (const f of wanted) {
      if (f.name !== "key-name" && f.name !== "tag-key" && !f.name.startsWith("tag:")) throw new ApiError("InvalidParameterValue", `The filter '${f.name}' is invalid`);
    }
    const found = [...this.keyPairs.values()].filter(
      (k) => (names.length === 0 || names.includes(k.name)) && wanted.every((f) => tagsMatch(k.tags, f) ?? f.values.some((v) => matchesValue(v, k.name))),
    );
    return { keySet: items(found.map((k) => keyPairXml(k, isTrue(p.get("IncludePublicKey"))))) };
  }

  private consoleOutput(p: Params): XmlObject {
    const id = required(p, "InstanceId");
    const instance = this.instances.get(id);
    if (!instance) throw new ApiError("InvalidInstanceID.NotFound", `The instance ID '${id}' does not exist`);
    return {
      instanceId: id,
      timestamp: new Date(),
      output: instance.console ? Buffer.from(instance.console).toString("base64") : undefined,
    };
  }

  private createTags(p: Params): XmlObject {
    const ids = list(p, "ResourceId");
    const given = tags(p, "Tag");
    for (const id of ids) {
      const target = this.instances.get(id)?.tags ?? [...this.keyPairs.values()].find((k) => k.id === id)?.tags;
      if (!target) throw new ApiError(id.startsWith("i-") ? "InvalidInstanceID.NotFound" : "InvalidID", `The ID '${id}' is not valid`);
    }
    for (const id of ids) {
      const target = (this.instances.get(id)?.tags ?? [...this.keyPairs.values()].find((k) => k.id === id)?.tags)!;
      for (const t of given) target.set(t.key, t.value);
    }
    return { return: true };
  }

  /** Stops taking work and waits for boots and shutdowns under way. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.boots.size) await Promise.allSettled([...this.boots]);
  }
}

/** undefined when the filter is not about tags. */
function tagsMatch(tagMap: Map<string, string>, f: Filter): boolean | undefined {
  if (f.name === "tag-key") return f.values.some((v) => [...tagMap.keys()].some((k) => matchesValue(v, k)));
  if (f.name.startsWith("tag:")) {
    const value = tagMap.get(f.name.slice(4));
    return value !== undefined && f.values.some((v) => matchesValue(v, value));
  }
  return undefined;
}

function instanceMatches(i: Instance, f: Filter): boolean {
  const byTag = tagsMatch(i.tags, f);
  if (byTag !== undefined) return byTag;
  const field: Record<string, string | undefined> = {
    "instance-id": i.id,
    "instance-state-name": i.state,
    "client-token": i.clientToken,
    "key-name": i.keyName,
    "image-id": i.imageId,
    "instance-type": i.instanceType,
  };
  const value = field[f.name];
  return value !== undefined && f.values.some((v) => matchesValue(v, value));
}

function required(p: Params, name: string): string {
  const value = p.get(name);
  if (value === undefined || value === "") throw new ApiError("MissingParameter", `The request must contain the parameter ${name}`);
  return value;
}

/** `ssh_authorized_keys` of a `#cloud-config` user data (the list form). */
export function userDataKeys(userData: string | undefined): string[] {
  if (!userData?.startsWith("#cloud-config")) return [];
  const out: string[] = [];
  let inList = false;
  for (const line of userData.split("\n")) {
    if (/^ssh_authorized_keys:\s*$/.test(line)) {
      inList = true;
      continue;
    }
    const item = /^\s+-\s+(.+?)\s*$/.exec(line);
    if (inList && item) out.push(item[1]!.startsWith('"') ? (JSON.parse(item[1]!) as string) : item[1]!);
    else if (!/^\s/.test(line)) inList = false;
  }
  return out;
}

const isRunning = (instance: Instance) => instance.state === "running";
const delay = (ms: number) => (ms > 0 ? new Promise<void>((r) => setTimeout(r, ms)) : Promise.resolve());
const gmt = (d: Date) => `${d.toISOString().slice(0, 19).replace("T", " ")} GMT`;

function bootLog(instance: Instance): string {
  return [
    `[    0.000000] Linux version 6.1.0-corral (emulated EC2 instance ${instance.id})`,
    `[    1.234567] systemd[1]: Started OpenBSD Secure Shell server.`,
    `Cloud-init v. 22.4.2 running 'modules:config' at ${gmt(new Date())}.`,
    "",
  ].join("\n");
}

/** What cloud-init's `write-ssh-key-fingerprints` prints on the console (keys only; an empty block when none). */
function consoleKeyBlock(instance: Instance, keyLines: string): string {
  const keys = keyLines
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  if (!keys.length) return `Cloud-init v. 22.4.2 finished at ${gmt(new Date())}. Datasource DataSourceEc2Local.\n`;
  return [
    `ec2: #############################################################`,
    `ec2: -----BEGIN SSH HOST KEY FINGERPRINTS-----`,
    `ec2: -----END SSH HOST KEY FINGERPRINTS-----`,
    `ec2: #############################################################`,
    `-----BEGIN SSH HOST KEY KEYS-----`,
    ...keys.map((k) => k.split(/\s+/).slice(0, 2).join(" ") + ` root@${instance.id}`),
    `-----END SSH HOST KEY KEYS-----`,
    `Cloud-init v. 22.4.2 finished at ${gmt(new Date())}. Datasource DataSourceEc2Local.`,
    "",
  ].join("\n");
}
