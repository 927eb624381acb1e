/** The emulator's resources and how EC2 renders them. */
import { createHash, randomBytes } from "node:crypto";
import { items, type XmlObject } from "./xml.js";

export type InstanceStateName = "pending" | "running" | "shutting-down" | "terminated" | "stopping" | "stopped";

/** EC2's state codes. */
export const STATE_CODES: Record<InstanceStateName, number> = {
  pending: 0,
  running: 16,
  "shutting-down": 32,
  terminated: 48,
  stopping: 64,
  stopped: 80,
};

export interface StateReason {
  code: string;
  message: string;
}

export interface Instance {
  id: string;
  reservationId: string;
  imageId: string;
  instanceType: string;
  keyName?: string;
  clientToken?: string;
  subnetId: string;
  vpcId: string;
  securityGroupIds: string[];
  tags: Map<string, string>;
  state: InstanceStateName;
  stateReason?: StateReason;
  /** StateTransitionReason */
  reason: string;
  /** EC2 shows whole seconds. */
  launchTime: Date;
  launchedAtMs: number;
  launchIndex: number;
  privateIp?: string;
  publicIp?: string;
  privateDnsName: string;
  wantsPublicIp: boolean;
  /** The keys its machine lets in (the key pair's, then user data's `ssh_authorized_keys`). */
  authorizedKeys: string[];
  userData?: string;
  /** Decoded console output ("" until the machine booted). */
  console: string;
  containerId?: string;
}

export interface KeyPair {
  id: string;
  name: string;
  publicKey: string;
  fingerprint: string;
  keyType: string;
  createTime: Date;
  tags: Map<string, string>;
}

export const OWNER_ID = "123456789012";
export const DEFAULT_VPC = "vpc-0c0ffee0000000001";
export const DEFAULT_SUBNET = "subnet-0c0ffee0000000001";
export const DEFAULT_GROUP = "sg-0c0ffee0000000001";

const hex = (n: number) => randomBytes(Math.ceil(n / 2)).toString("hex").slice(0, n);
export const newInstanceId = () => `i-0${hex(16)}`;
export const newReservationId = () => `r-0${hex(16)}`;
export const newKeyPairId = () => `key-0${hex(16)}`;
export const newRequestId = () => {
  const h = hex(32);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
};

/** Resource-name hostnames (EC2's `HostnameType=resource-name`): known at launch, before any address is. */
export function privateDnsName(instanceId: string, region: string): string {
  return `${instanceId}.${region === "us-east-1" ? "ec2.internal" : `${region}.compute.internal`}`;
}

/** EC2's fingerprint of an imported ed25519 key: base64 of the blob's SHA-256; of others, MD5 as colon hex. */
export function keyFingerprint(keyType: string, blob: Buffer): string {
  if (keyType === "ed25519") return createHash("sha256").update(blob).digest("base64").replace(/=+$/, "");
  return createHash("md5").update(blob).digest("hex").replace(/(..)(?!$)/g, "$1:");
}

const tagSet = (tags: Map<string, string>) => items([...tags].map(([key, value]) => ({ key, value })));
const state = (name: InstanceStateName) => ({ code: STATE_CODES[name], name });

export function instanceXml(i: Instance, region: string): XmlObject {
  return {
    instanceId: i.id,
    imageId: i.imageId,
    instanceState: state(i.state),
    privateDnsName: i.privateDnsName,
    dnsName: i.publicIp ? `ec2-${i.publicIp.replace(/\./g, "-")}.compute-1.amazonaws.com` : "",
    reason: i.reason,
    keyName: i.keyName,
    amiLaunchIndex: i.launchIndex,
    productCodes: "",
    instanceType: i.instanceType,
    launchTime: i.launchTime,
    placement: { availabilityZone: `${region}a`, groupName: "", tenancy: "default" },
    monitoring: { state: "disabled" },
    subnetId: i.subnetId,
    vpcId: i.vpcId,
    privateIpAddress: i.privateIp,
    ipAddress: i.publicIp,
    sourceDestCheck: true,
    groupSet: items(i.securityGroupIds.map((g) => ({ groupId: g, groupName: g === DEFAULT_GROUP ? "default" : g }))),
    stateReason: i.stateReason ? { code: i.stateReason.code, message: i.stateReason.message } : undefined,
    architecture: "x86_64",
    rootDeviceType: "ebs",
    rootDeviceName: "/dev/xvda",
    blockDeviceMapping: items([]),
    virtualizationType: "hvm",
    clientToken: i.clientToken ?? "",
    tagSet: i.tags.size ? tagSet(i.tags) : undefined,
    hypervisor: "xen",
    ebsOptimized: false,
    enaSupport: true,
    privateDnsNameOptions: { hostnameType: "resource-name", enableResourceNameDnsARecord: true, enableResourceNameDnsAAAARecord: false },
  };
}

export function reservationXml(reservationId: string, instances: Instance[], region: string): XmlObject {
  return {
    reservationId,
    ownerId: OWNER_ID,
    groupSet: items([]),
    instancesSet: items(instances.map((i) => instanceXml(i, region))),
  };
}

export function keyPairXml(k: KeyPair, includePublicKey: boolean): XmlObject {
  return {
    keyPairId: k.id,
    keyType: k.keyType,
    tagSet: k.tags.size ? tagSet(k.tags) : undefined,
    publicKey: includePublicKey ? k.publicKey : undefined,
    createTime: k.createTime,
    keyName: k.name,
    keyFingerprint: k.fingerprint,
  };
}

export const stateChangeXml = (id: string, previous: InstanceStateName, current: InstanceStateName): XmlObject => ({
  instanceId: id,
  currentState: state(current),
  previousState: state(previous),
});
