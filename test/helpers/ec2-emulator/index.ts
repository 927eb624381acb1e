/**
 * An EC2 API emulator for tests (never shipped): an HTTP server on 127.0.0.1 speaking EC2's Query protocol (form
 * bodies `Action=...&Version=...`, any SigV4 signature accepted, XML replies in EC2's shapes and its error
 * envelope), whose instances are real containers of the node image, so CONFIRM, BOOTSTRAP and the automators reach
 * them over SSH. Actions: RunInstances (ClientToken, TagSpecifications, KeyName, UserData's ssh_authorized_keys),
 * DescribeInstances (filters by tag, state, id), TerminateInstances, ImportKeyPair, DeleteKeyPair,
 * DescribeKeyPairs, GetConsoleOutput (the host-key block cloud-init prints), CreateTags; faults: any error of any
 * call (capacity, throttling, authorization), instances that never leave pending or end before they run, consoles
 * without or with foreign host keys. Call `stop` in `test.after.always`: it removes every container it made.
 */
import { randomBytes } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { NODE_IMAGE } from "@corral/deploy";
import { ApiError, EmulatedAccount, type ApiFault, type EmulatorSettings, type LaunchFault, type RecordedCall } from "./emulator.js";
import { dockerMachines, type Machines } from "./machines.js";
import type { Instance, KeyPair } from "./model.js";
import { newRequestId } from "./model.js";
import { parseForm } from "./query.js";
import { actionResponse, errorResponse } from "./xml.js";

export type { ApiFault, EmulatorSettings, LaunchFault, RecordedCall } from "./emulator.js";
export type { Machines, MachineSpec, StartedMachine } from "./machines.js";
export type { Instance as EmulatedInstance, KeyPair as EmulatedKeyPair, InstanceStateName } from "./model.js";
export { userDataKeys } from "./emulator.js";

/** The AMI the emulator knows by default: the node image. */
export const EMULATOR_AMI = "ami-0c0ffee00b00c5e12";

export interface Ec2EmulatorOptions extends Partial<EmulatorSettings> {
  /** Access key ids whose calls fail with UnauthorizedOperation. */
  deniedAccessKeys?: string[];
  /** Machines behind the instances. @default containers of the node image (dockerMachines) */
  machines?: Machines;
  /** Progress lines (launches, state changes). @default none */
  log?: (line: string) => void;
}

export interface Ec2Emulator {
  /** The endpoint (`http://127.0.0.1:<port>`) for the provider field `endpoint`. */
  readonly url: string;
  readonly region: string;
  /** Every instance ever launched (terminated ones stay), by id. */
  instances(): Instance[];
  instance(id: string): Instance | undefined;
  keyPairs(): KeyPair[];
  /** Every call received, in order. */
  calls(action?: string): RecordedCall[];
  /** The next matching calls fail with this error. */
  failNext(fault: ApiFault): void;
  /** The next `times` calls (of `action`) fail with EC2's throttling error (503 RequestLimitExceeded). */
  throttle(times: number, action?: string): void;
  /** The next `times` RunInstances fail with InsufficientInstanceCapacity (500). */
  insufficientCapacity(times?: number): void;
  /** The next `times` launched instances meet this fault. */
  nextLaunches(fault: LaunchFault, times?: number): void;
  /**
   * The next call of `action` is carried out but its reply is held until `release` (the caller may be killed
   * meanwhile). `arrived` resolves when such a call came in.
   */
  holdReply(action: string): { arrived: Promise<RecordedCall>; release(): void };
  /** Changes a setting of the running emulator (boot and console delays, listing lag, ...). */
  configure(changes: Partial<EmulatorSettings>): void;
  /** Terminates instances as if someone did it in the console. */
  terminate(ids: string[]): void;
  stop(): Promise<void>;
}

const UNAUTHORIZED = (action: string) =>
  `You are not authorized to perform this operation. User: arn:aws:iam::123456789012:user/corral-test is not authorized to perform: ec2:${action} because no identity-based policy allows the ec2:${action} action`;

export async function startEc2Emulator(options: Ec2EmulatorOptions = {}): Promise<Ec2Emulator> {
  const id = randomBytes(4).toString("hex");
  const log = options.log ?? (() => {});
  const settings: EmulatorSettings = {
    region: options.region ?? "us-east-1",
    images: options.images ?? { [EMULATOR_AMI]: NODE_IMAGE },
    sshUser: options.sshUser ?? "admin",
    bootDelayMs: options.bootDelayMs ?? 0,
    consoleDelayMs: options.consoleDelayMs ?? 0,
    terminateDelayMs: options.terminateDelayMs ?? 200,
    mapPublicIpOnLaunch: options.mapPublicIpOnLaunch ?? false,
    listingLagMs: options.listingLagMs ?? 0,
    tagsOnLaunch: options.tagsOnLaunch ?? true,
  };
  const machines = options.machines ?? (await dockerMachines(id));
  const account = new EmulatedAccount(settings, machines, (line) => log(`[ec2-emulator ${id}] ${line}`));
  const denied = new Set(options.deniedAccessKeys ?? []);
  const holds: Array<{ action: string; taken: boolean; arrived: (call: RecordedCall) => void; released: Promise<void> }> = [];

  const answer = async (req: IncomingMessage, res: ServerResponse) => {
    const requestId = newRequestId();
    const send = (status: number, body: string) => {
      res.writeHead(status, { "content-type": "text/xml;charset=UTF-8", "x-amzn-requestid": requestId });
      res.end(body);
    };
    let body = "";
    for await (const chunk of req) body += String(chunk);
    const params = parseForm(body);
    const action = params.get("Action") ?? "";
    const credential = /Credential=([^/,\s]+)\//.exec(req.headers.authorization ?? "");
    const call: RecordedCall = { action, params: Object.fromEntries(params), accessKeyId: credential?.[1] ?? "", at: Date.now() };
    account.calls.push(call);
    try {
      if (req.method !== "POST") throw new ApiError("InvalidHttpRequest", "The EC2 Query API takes POST requests with a form body here");
      if (!credential) throw new ApiError("AuthFailure", "AWS was not able to validate the provided access credentials", 401);
      if (!action) throw new ApiError("MissingAction", "The request must contain the parameter Action");
      if (!params.get("Version")) throw new ApiError("MissingParameter", "The request must contain the parameter Version");
      if (denied.has(credential[1]!)) throw new ApiError("UnauthorizedOperation", UNAUTHORIZED(action), 403);
      account.checkFaults(action);
      const reply = actionResponse(action, requestId, await account.handle(action, params));
      const hold = holds.find((h) => !h.taken && h.action === action);
      if (hold) {
        hold.taken = true;
        hold.arrived(call);
        await hold.released;
      }
      send(200, reply);
    } catch (err) {
      if (!(err instanceof ApiError)) {
        log(`[ec2-emulator ${id}] ${action}: ${String(err)}`);
        send(500, errorResponse("InternalError", "An internal error has occurred", requestId));
        return;
      }
      send(err.status, errorResponse(err.code, err.message, requestId));
    }
  };
  const server = createServer((req, res) => void answer(req, res).catch(() => res.destroy()));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let stopping: Promise<void> | undefined;
  return {
    url,
    region: settings.region,
    instances: () => [...account.instances.values()],
    instance: (instanceId) => account.instances.get(instanceId),
    keyPairs: () => [...account.keyPairs.values()],
    calls: (action) => account.calls.filter((c) => action === undefined || c.action === action),
    failNext: (fault) => account.failNext(fault),
    throttle: (times, action) => account.failNext({ code: "RequestLimitExceeded", message: "Request limit exceeded.", status: 503, times, ...(action ? { action } : {}) }),
    insufficientCapacity: (times = 1) =>
      account.failNext({
        action: "RunInstances",
        code: "InsufficientInstanceCapacity",
        message:
          `We currently do not have sufficient capacity in the Availability Zone you requested (${settings.region}a). Our system will be ` +
          `working on provisioning additional capacity. You can currently get capacity by not specifying an Availability Zone in your request.`,
        status: 500,
        times,
      }),
    nextLaunches: (fault, times) => account.nextLaunches(fault, times),
    holdReply(action) {
      let arrived!: (call: RecordedCall) => void;
      let release!: () => void;
      const arrival = new Promise<RecordedCall>((resolve) => (arrived = resolve));
      const released = new Promise<void>((resolve) => (release = resolve));
      holds.push({ action, taken: false, arrived, released });
      return { arrived: arrival, release };
    },
    configure: (changes) => void Object.assign(settings, changes),
    terminate: (ids) => void account.terminateInstances(ids),
    stop() {
      stopping ??= (async () => {
        for (const h of holds) h.taken = true;
        server.closeAllConnections();
        await new Promise<void>((resolve) => server.close(() => resolve()));
        await account.close();
        await machines.close();
      })();
      return stopping;
    },
  };
}
