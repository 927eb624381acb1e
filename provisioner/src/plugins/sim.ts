import { createHash, randomBytes, randomUUID } from "node:crypto";
import type { HealthTarget, Json, JsonObject, NodeHealthCheck, PluginField, PluginSpec } from "@corral/contracts";
import { sleep } from "@corral/shared";
import { removeNodeDir } from "../sandbox/removal.js";
import type { PluginContext, PluginOutcome, ProviderPlugin } from "./types.js";

type SimTask = "create" | "confirm" | "delete";
const SIM_TASKS: readonly SimTask[] = ["create", "confirm", "delete"];

const textField = (label: string, tip: string): PluginField => ({ label, type: "text", override: false, tip });

export const SIM_SPEC: PluginSpec = {
  name: "sim",
  description: "Simulated machines: no cloud, configurable delays and failures (tests, demos, benchmarks)",
  parameters: {
    admin: {
      fields: {
        delay_ms: textField("Delay (ms)", "How long every task takes, in milliseconds (default 0)"),
        ...Object.fromEntries(
          SIM_TASKS.map((t) => [
            `delay_${t}_ms`,
            textField(`${t.toUpperCase()} delay (ms)`, `How long ${t.toUpperCase()} takes; overrides delay_ms`),
          ]),
        ),
        failure_probability: textField("Failure probability", "Chance from 0 to 1 that any task fails (default 0)"),
        ...Object.fromEntries(
          SIM_TASKS.map((t) => [
            `fail_${t}`,
            textField(`Fail ${t.toUpperCase()}`, `"true" makes every ${t.toUpperCase()} fail`),
          ]),
        ),
        fail_nodes: textField("Failing nodes", "Comma-separated hostnames or node numbers whose tasks always fail"),
        health_check: textField(
          "Health checks",
          `"true" has the provisioner check the nodes' health like real machines' (they answer healthy); off by default (tests, benchmarks)`,
        ),
      },
      required: [],
    },
    user: { fields: {}, required: [] },
  },
  // Sim machines do not exist: automators run their actions on the provisioner host, in the tenant's sandbox.
  capabilities: { localActions: true },
};

/**
 * `sim-secured`: `sim` with a required, sensitive user field `sim_password` (any value; never used), so that
 * missing provider fields and the hiding of secret fields can be exercised. Carried only when a provisioner is
 * told to (`CORRAL_PROVISIONER_SIM_SECURED=true`), so plain `sim` users need no password.
 */
export const SIM_SECURED_SPEC: PluginSpec = {
  ...SIM_SPEC,
  name: "sim-secured",
  description: "Simulated machines that require a password provider field (tests of missing and secret fields)",
  parameters: {
    ...SIM_SPEC.parameters,
    user: {
      fields: {
        sim_password: {
          label: "Simulator password",
          type: "password",
          override: false,
          sensitive: true,
          tip: "Any value; required so that missing provider fields can be exercised",
        },
      },
      required: [["sim_password"]],
    },
  },
};

export interface SimProviderOptions {
  /** Random source in [0, 1) for `failure_probability`. @default Math.random */
  random?: () => number;
  /** The specification announced (its name is the provider type). @default SIM_SPEC */
  spec?: PluginSpec;
  /**
   * What a health check of a node finds, for nodes whose provider has `health_check: true` (tests make machines
   * vanish with it). @default every node is healthy
   */
  health?: (node: HealthTarget) => NodeHealthCheck;
}

/**
 * The `sim` provider: CREATE answers a unique `providerid` and `ssh-auth`; CONFIRM a unique `hostname` (the
 * suggested one when the task has it) and addresses; DELETE removes the node's directory on this host (what its
 * local actions left, `<workDir>/<tenant>/nodes/<clusterId>/<nodeId>`, links never followed) and its cluster's once
 * empty, so nothing of it reaches a later tenant of the same name. Delays and failures come from the provider's
 * fields (`delay_ms`, `delay_<task>_ms`, `failure_probability`, `fail_<task>`, `fail_nodes`); unknown fields are
 * ignored.
 *
 * Addresses: `bind_v4` in 10.0.0.0/8 and `access_v4` in 100.64.0.0/10 from a per-instance counter that starts at a
 * random offset, so they are unique within a provisioner (4 million nodes) and, with high probability, across the
 * provisioners of one run.
 */
export function createSimProvider(options: SimProviderOptions = {}): ProviderPlugin {
  const random = options.random ?? Math.random;
  let counter = randomBytes(3).readUIntBE(0, 3);
  const nextAddresses = () => {
    counter = (counter + 1) % (1 << 22);
    const n = counter;
    return {
      access_v4: `100.${64 + ((n >> 16) & 63)}.${(n >> 8) & 255}.${n & 255}`,
      bind_v4: `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
    };
  };
  const run = async (
    ctx: PluginContext,
    task: SimTask,
    succeed: (fields: JsonObject) => PluginOutcome | Promise<PluginOutcome>,
  ): Promise<PluginOutcome> => {
    const fields = ctx.task.config.provider?.provisioner ?? {};
    const delayMs = numberField(fields, `delay_${task}_ms`) ?? numberField(fields, "delay_ms") ?? 0;
    if (delayMs > 0 && !(await sleep(delayMs, ctx.signal))) throw ctx.signal.reason;
    const failure = injectedFailure(ctx, task, fields, random);
    if (failure) return { status: 1, stderr: `sim: ${failure}\n` };
    return succeed(fields);
  };
  return {
    kind: "providertypes",
    spec: options.spec ?? SIM_SPEC,
    create: (ctx) =>
      run(ctx, "create", () => ({
        status: 0,
        stdout: "sim: machine requested\n",
        result: {
          providerid: `sim-${randomUUID()}`,
          "ssh-auth": { user: ctx.task.config.sshuser || "root", password: randomBytes(12).toString("base64url") },
        },
      })),
    confirm: (ctx) =>
      run(ctx, "confirm", () => {
        const { config } = ctx.task;
        const hostname = config.hostname || `sim-${config.nodenum}-${shortHash(ctx.task.nodeId)}.local`;
        return {
          status: 0,
          stdout: `sim: machine ${hostname} ready\n`,
          hostname,
          ipaddresses: nextAddresses(),
          result: { ssh_host_keys: { rsa: `SIM${createHash("sha256").update(ctx.task.nodeId).digest("base64")}` } },
        };
      }),
    delete: (ctx) =>
      run(ctx, "delete", async () => {
        await removeNodeDir(ctx.workDir, ctx.tenant, ctx.task.clusterId, ctx.task.nodeId);
        return { status: 0, stdout: "sim: machine deleted\n" };
      }),
    // Simulated machines are never checked unless their provider asks for it (health_check): one batch per
    // provider, answered without I/O, so a benchmark measures what the checks cost around the provider.
    health: {
      batchOf: (node) => (isTrue(node.config.provider?.provisioner?.["health_check"]) ? `provider ${node.config.provider.name}` : undefined),
      check: async (nodes) => nodes.map((node) => options.health?.(node) ?? { state: "healthy", message: "sim: the simulated machine answers" }),
    },
  };
}

function injectedFailure(ctx: PluginContext, task: SimTask, fields: JsonObject, random: () => number): string | undefined {
  const { config } = ctx.task;
  if (isTrue(fields[`fail_${task}`])) return `${task.toUpperCase()} fails by configuration (fail_${task})`;
  const failNodes = String(fields["fail_nodes"] ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (failNodes.includes(config.hostname) || failNodes.includes(String(config.nodenum))) {
    return `node ${config.hostname} (${config.nodenum}) fails by configuration (fail_nodes)`;
  }
  const p = numberField(fields, "failure_probability") ?? 0;
  if (p > 0 && random() < p) return `${task.toUpperCase()} failed at random (failure_probability ${p})`;
  return undefined;
}

function numberField(fields: JsonObject, name: string): number | undefined {
  const raw: Json | undefined = fields[name];
  if (raw === undefined || raw === null || raw === "") return undefined;
  const n = typeof raw === "number" ? raw : Number(raw);
  return Number.isFinite(n) && n >= 0 ? n : undefined;
}

function isTrue(value: Json | undefined): boolean {
  return value === true || (typeof value === "string" && value.trim().toLowerCase() === "true");
}

function shortHash(text: string): string {
  return createHash("sha256").update(text).digest("hex").slice(0, 8);
}
