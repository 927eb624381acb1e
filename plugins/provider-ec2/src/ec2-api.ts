import { createHash } from "node:crypto";
import type { EC2Client, Instance, InstanceStateChange, KeyPairInfo, RunInstancesCommandInput } from "@aws-sdk/client-ec2";
import type { Ec2Settings } from "./settings.js";
import type { Filter, Tag } from "./naming.js";

/**
 * A failed EC2 call, with AWS's error code and message (`InsufficientInstanceCapacity`, `UnauthorizedOperation`,
 * `RequestLimitExceeded` after the SDK's retries) or what kept the request from an answer. Its message is meant
 * for the node's action output and never holds a credential.
 */
export class Ec2Error extends Error {
  override readonly name = "Ec2Error";
  constructor(
    readonly action: string,
    /** AWS's error code; for a request that got no answer, the client's (`ECONNREFUSED`, `TimeoutError`, ...). */
    readonly code: string,
    readonly awsMessage: string,
    readonly httpStatus?: number,
  ) {
    super(`ec2: ${action} failed: ${code}: ${awsMessage}`);
  }
}

export const isEc2Code = (err: unknown, ...codes: string[]): err is Ec2Error => err instanceof Ec2Error && codes.includes(err.code);

interface SdkErrorShape {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function toEc2Error(action: string, err: unknown): Ec2Error {
  const e = (typeof err === "object" && err !== null ? err : { message: String(err) }) as SdkErrorShape;
  const status = e.$metadata?.httpStatusCode;
  const code = e.code && e.name === "Error" ? e.code : e.name || e.code || "Error";
  const message = (e.message ?? String(err)).trim() || "no message";
  if (code === "CredentialsProviderError") {
    return new Ec2Error(action, code, `${message} (set the provider fields access_key_id and secret_access_key, or give the provisioner AWS credentials)`);
  }
  return new Ec2Error(action, code, message, status);
}

/** The parts of an EC2 instance the provider uses. */
export interface Ec2Instance {
  id: string;
  /** pending, running, shutting-down, terminated, stopping, stopped */
  state: string;
  stateReason?: { code: string; message: string };
  privateIp?: string;
  publicIp?: string;
  privateDnsName?: string;
  /** ms since the epoch */
  launchTime?: number;
  keyName?: string;
  tags: Record<string, string>;
}

/** Instances in these states still hold (or may hold again) a machine: a node has at most one. */
export const LIVE_STATES = ["pending", "running", "stopping", "stopped"] as const;

function toInstance(i: Instance): Ec2Instance | undefined {
  if (!i.InstanceId) return undefined;
  const tags: Record<string, string> = {};
  for (const t of i.Tags ?? []) if (t.Key) tags[t.Key] = t.Value ?? "";
  return {
    id: i.InstanceId,
    state: i.State?.Name ?? "unknown",
    ...(i.StateReason?.Code || i.StateReason?.Message ? { stateReason: { code: i.StateReason.Code ?? "", message: i.StateReason.Message ?? "" } } : {}),
    ...(i.PrivateIpAddress ? { privateIp: i.PrivateIpAddress } : {}),
    ...(i.PublicIpAddress ? { publicIp: i.PublicIpAddress } : {}),
    ...(i.PrivateDnsName ? { privateDnsName: i.PrivateDnsName } : {}),
    ...(i.LaunchTime ? { launchTime: i.LaunchTime.getTime() } : {}),
    ...(i.KeyName ? { keyName: i.KeyName } : {}),
    tags,
  };
}

export interface Ec2KeyPair {
  name: string;
  publicKey?: string;
  /** ms since the epoch */
  createTime?: number;
  tags: Record<string, string>;
}

function toKeyPair(k: KeyPairInfo): Ec2KeyPair | undefined {
  if (!k.KeyName) return undefined;
  const tags: Record<string, string> = {};
  for (const t of k.Tags ?? []) if (t.Key) tags[t.Key] = t.Value ?? "";
  return {
    name: k.KeyName,
    ...(k.PublicKey ? { publicKey: k.PublicKey } : {}),
    ...(k.CreateTime ? { createTime: k.CreateTime.getTime() } : {}),
    tags,
  };
}

export interface Ec2ApiOptions {
  /** Attempts per call, the first included (the SDK's retry strategy: throttling and transient errors). @default 3 */
  maxAttempts?: number;
  /** Per HTTP request, ms. @default 30000 */
  requestTimeoutMs?: number;
}

type AwsSdk = typeof import("@aws-sdk/client-ec2");
let sdkLoad: Promise<AwsSdk> | undefined;
/**
 * The AWS SDK, loaded at the first EC2 call: every provisioner loads this module (it is bundled), and one that never
 * gets an `ec2` task does not pay the SDK's second of loading.
 */
const awsSdk = () => (sdkLoad ??= import("@aws-sdk/client-ec2"));

/**
 * The EC2 calls of the provider, on one SDK client (one region, endpoint and credential). Every failure is an
 * `Ec2Error`.
 */
export class Ec2Api {
  private client: EC2Client | undefined;

  constructor(
    readonly settings: Pick<Ec2Settings, "region" | "endpoint" | "credentials">,
    private readonly options: Ec2ApiOptions = {},
  ) {}

  /** Where the calls go, for messages: the endpoint or the region. */
  get where(): string {
    return this.settings.endpoint ?? `region ${this.settings.region}`;
  }

  private makeClient(sdk: AwsSdk): EC2Client {
    const { settings, options } = this;
    return new sdk.EC2Client({
      region: settings.region,
      ...(settings.endpoint ? { endpoint: settings.endpoint } : {}),
      ...(settings.credentials ? { credentials: settings.credentials } : {}),
      maxAttempts: options.maxAttempts ?? 3,
      requestHandler: { requestTimeout: options.requestTimeoutMs ?? 30_000, connectionTimeout: 10_000 },
    });
  }

  private async call<T>(action: string, send: (sdk: AwsSdk, client: EC2Client) => Promise<T>): Promise<T> {
    try {
      const sdk = await awsSdk();
      this.client ??= this.makeClient(sdk);
      return await send(sdk, this.client);
    } catch (err) {
      throw toEc2Error(action, err);
    }
  }

  async describeInstances(filters: Filter[], signal?: AbortSignal): Promise<Ec2Instance[]> {
    const out: Ec2Instance[] = [];
    let token: string | undefined;
    do {
      const page = await this.call("DescribeInstances", (sdk, client) =>
        client.send(new sdk.DescribeInstancesCommand({ Filters: filters, ...(token ? { NextToken: token } : {}) }), { abortSignal: signal }),
      );
      for (const r of page.Reservations ?? []) for (const i of r.Instances ?? []) {
        const inst = toInstance(i);
        if (inst) out.push(inst);
      }
      token = page.NextToken || undefined;
    } while (token);
    return out;
  }

  /** One instance by id, undefined when EC2 does not know it (a filter, so an unknown id is not an error). */
  async describeInstance(id: string, signal?: AbortSignal): Promise<Ec2Instance | undefined> {
    return (await this.describeInstances([{ Name: "instance-id", Values: [id] }], signal)).find((i) => i.id === id);
  }

  async runInstance(input: RunInstancesCommandInput, signal?: AbortSignal): Promise<Ec2Instance> {
    const reservation = await this.call("RunInstances", (sdk, client) => client.send(new sdk.RunInstancesCommand(input), { abortSignal: signal }));
    const made = reservation.Instances?.map(toInstance).find((i) => i !== undefined);
    if (!made) throw new Ec2Error("RunInstances", "EmptyReservation", `reservation ${reservation.ReservationId ?? "?"} holds no instance`);
    return made;
  }

  async terminateInstances(ids: string[], signal?: AbortSignal): Promise<InstanceStateChange[]> {
    const out = await this.call("TerminateInstances", (sdk, client) => client.send(new sdk.TerminateInstancesCommand({ InstanceIds: ids }), { abortSignal: signal }));
    return out.TerminatingInstances ?? [];
  }

  async importKeyPair(name: string, publicKey: string, tags: Tag[], signal?: AbortSignal): Promise<void> {
    await this.call("ImportKeyPair", (sdk, client) =>
      client.send(
        new sdk.ImportKeyPairCommand({
          KeyName: name,
          PublicKeyMaterial: new TextEncoder().encode(publicKey),
          TagSpecifications: [{ ResourceType: "key-pair", Tags: tags }],
        }),
        { abortSignal: signal },
      ),
    );
  }

  async deleteKeyPair(name: string, signal?: AbortSignal): Promise<void> {
    await this.call("DeleteKeyPair", (sdk, client) => client.send(new sdk.DeleteKeyPairCommand({ KeyName: name }), { abortSignal: signal }));
  }

  /** Key pairs by name (undefined when EC2 does not know it) or by filters, public keys included. */
  async describeKeyPair(name: string, signal?: AbortSignal): Promise<Ec2KeyPair | undefined> {
    try {
      const out = await this.call("DescribeKeyPairs", (sdk, client) =>
        client.send(new sdk.DescribeKeyPairsCommand({ KeyNames: [name], IncludePublicKey: true }), { abortSignal: signal }),
      );
      return out.KeyPairs?.map(toKeyPair).find((k) => k?.name === name);
    } catch (err) {
      if (isEc2Code(err, "InvalidKeyPair.NotFound")) return undefined;
      throw err;
    }
  }

  async describeKeyPairs(filters: Filter[], signal?: AbortSignal): Promise<Ec2KeyPair[]> {
    const out = await this.call("DescribeKeyPairs", (sdk, client) => client.send(new sdk.DescribeKeyPairsCommand({ Filters: filters }), { abortSignal: signal }));
    return (out.KeyPairs ?? []).map(toKeyPair).filter((k): k is Ec2KeyPair => k !== undefined);
  }

  /** The instance's console output, decoded ("" while EC2 has none yet). */
  async consoleOutput(id: string, signal?: AbortSignal): Promise<string> {
    const out = await this.call("GetConsoleOutput", (sdk, client) => client.send(new sdk.GetConsoleOutputCommand({ InstanceId: id }), { abortSignal: signal }));
    return out.Output ? Buffer.from(out.Output, "base64").toString("utf8") : "";
  }

  async createTags(resources: string[], tags: Tag[], signal?: AbortSignal): Promise<void> {
    await this.call("CreateTags", (sdk, client) => client.send(new sdk.CreateTagsCommand({ Resources: resources, Tags: tags }), { abortSignal: signal }));
  }

  destroy(): void {
    this.client?.destroy();
    this.client = undefined;
  }
}

/** One client per region, endpoint and credential; the secret only enters the key as a hash. */
export function clientKey(settings: Pick<Ec2Settings, "region" | "endpoint" | "credentials">): string {
  const secret = settings.credentials ? createHash("sha256").update(settings.credentials.secretAccessKey).digest("base64url") : "";
  return [settings.region, settings.endpoint ?? "", settings.credentials?.accessKeyId ?? "", secret].join("\0");
}
