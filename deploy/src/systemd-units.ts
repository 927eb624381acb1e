import { mkdir, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { METRICS_PROCESSES, type MetricsProcess } from "@corral/shared";
import { nodeArgsOf } from "./compiled.js";
import { NATS_SERVER_GOGC, SERVICE_NODE_OPTIONS } from "./servers.js";

/**
 * The systemd units of deploy/systemd/, made here so the eight service units share one hardening block instead
 * of eight copies. `node --import=tsx deploy/bin/systemd-units.ts` rewrites the directory; a test checks that the
 * committed files are this output.
 */

/** Where the units expect things on a machine (docs/operations.md, Three machines with systemd). */
export const SYSTEMD_LAYOUT = {
  /** The repository checkout with `npm ci` and `npm run build` done (the units run the compiled JavaScript). */
  installDir: "/opt/corral",
  /** Connection settings and secrets, mode 0600 files owned by root, readable by the `corral` group. */
  configDir: "/etc/corral",
  node: "/usr/bin/node",
  natsServer: "/usr/sbin/nats-server",
  redisServer: "/usr/bin/redis-server",
  user: "corral",
} as const;

const { installDir, configDir, node, natsServer, redisServer, user } = SYSTEMD_LAYOUT;
const HEADER = "# Made by deploy/src/systemd-units.ts (node --import=tsx deploy/bin/systemd-units.ts): change it there.";

/** Only Corral's own files and network sockets: no devices, capabilities, kernel modules or writes outside StateDirectory. */
const HARDENING = [
  "NoNewPrivileges=yes",
  "ProtectSystem=strict",
  "ProtectHome=yes",
  "PrivateTmp=yes",
  "PrivateDevices=yes",
  "PrivateMounts=yes",
  "RemoveIPC=yes",
  "ProtectKernelModules=yes",
  "ProtectControlGroups=yes",
  "ProtectClock=yes",
  "ProtectHostname=yes",
  "RestrictSUIDSGID=yes",
  "RestrictRealtime=yes",
  "LockPersonality=yes",
  "SystemCallArchitectures=native",
  "CapabilityBoundingSet=",
  "AmbientCapabilities=",
  "RestrictAddressFamilies=AF_INET AF_INET6 AF_UNIX AF_NETLINK",
  "UMask=0077",
];

/**
 * For every unit but the provisioner's. A provisioner's sandboxes are user, mount and PID namespaces with a /proc
 * of their own, and the kernel refuses that /proc where parts of the outer one are covered (ProtectKernelTunables,
 * ProtectKernelLogs and ProtectProc cover some), so there it would fall back to running actions unsandboxed.
 */
const NO_SANDBOXES = [
  "ProtectKernelTunables=yes",
  "ProtectKernelLogs=yes",
  "ProtectProc=invisible",
  "RestrictNamespaces=yes",
  "SystemCallFilter=@system-service",
];

const RESTART = ["Restart=always", "RestartSec=2"];
/** deploy/bin/build-check.mjs: exits 1, naming the reason, when the compiled JavaScript is missing or stale. */
const BUILD_CHECK = `ExecStartPre=${node} deploy/bin/build-check.mjs`;
const RUN_AS = [`User=${user}`, `Group=${user}`];

/** The file name and content of every unit in deploy/systemd/. */
export function systemdUnits(): Map<string, string> {
  const units = new Map<string, string>();
  for (const name of METRICS_PROCESSES) {
    units.set(`corral-${name}@.service`, processUnit(name));
  }
  units.set("corral-nats.service", natsUnit());
  units.set("corral-redis.service", redisUnit());
  units.set("corral-bus-setup.service", busSetupUnit());
  units.set("corral.target", target());
  return units;
}

/** Replaces the unit files in `dir` with {@link systemdUnits}; other files there are kept. */
export async function writeSystemdUnits(dir: string): Promise<string[]> {
  await mkdir(dir, { recursive: true });
  for (const old of (await readdir(dir)).filter(isUnitFile)) {
    await rm(join(dir, old));
  }
  const units = systemdUnits();
  for (const [name, text] of units) {
    await writeFile(join(dir, name), text);
  }
  return [...units.keys()];
}

/** Whether a file name is a unit's (what {@link writeSystemdUnits} owns). */
export function isUnitFile(name: string): boolean {
  return /\.(service|target)$/.test(name);
}

function processUnit(name: MetricsProcess): string {
  const isProvisioner = name === "provisioner";
  const entry = isProvisioner ? "provisioner/src/index.ts" : `services/${name}/src/index.ts`;
  const what = isProvisioner ? "provisioner" : `${name} service`;
  return unitFile({
    // Ordering only: on a machine without its own NATS or Redis these name nothing and are ignored.
    Unit: unitHead(`Corral ${what}, instance %i`, `file://${installDir}/docs/operations.md`, ["corral-nats.service", "corral-redis.service", "corral-bus-setup.service"]),
    Service: [
      "Type=simple",
      ...RUN_AS,
      `WorkingDirectory=${installDir}`,
      "Environment=NODE_ENV=production",
      // servers.ts SERVICE_NODE_OPTIONS: a larger young generation, fewer scavenges on the task path.
      `Environment=NODE_OPTIONS=${SERVICE_NODE_OPTIONS}`,
      // Every log line names the instance (shared/src/service-process.ts).
      "Environment=CORRAL_INSTANCE=%i",
      // Its connection settings (its NATS user and the NATS URLs; Redis for services), as `npm run deploy-config`
      // writes them; then settings of every process (corral.env: the NATS CA), of this service, of this instance
      // (a second instance on one machine needs other metrics ports). Variables win over the file's keys.
      `Environment=CORRAL_CONFIG=${configDir}/${name}.properties`,
      ...envFiles(name),
      ...(isProvisioner
        ? [
            // Each instance a work directory of its own: two on one machine must not share one.
            "StateDirectory=corral/provisioner-%i",
            "Environment=CORRAL_PROVISIONER_WORKDIR=/var/lib/corral/provisioner-%i",
          ]
        : []),
      // Refuses to start, saying why, on a build older than the sources (after a `git pull` without `npm run build`).
      BUILD_CHECK,
      `ExecStart=${node} ${nodeArgsOf(entry, "compiled").join(" ")}`,
      // SIGTERM drains in-flight work; a provisioner waits up to 60 s for its running tasks.
      "KillSignal=SIGTERM",
      `TimeoutStopSec=${isProvisioner ? 90 : 30}`,
      ...RESTART,
      ...HARDENING,
      ...(isProvisioner ? [] : NO_SANDBOXES),
    ],
    Install: ["WantedBy=corral.target", "DefaultInstance=1"],
  });
}

/** Optional environment files of a process: every process's, this one's, this instance's. */
function envFiles(name: MetricsProcess): string[] {
  return [`EnvironmentFile=-${configDir}/corral.env`, `EnvironmentFile=-${configDir}/${name}.env`, `EnvironmentFile=-${configDir}/${name}@%i.env`];
}

/** The [Unit] lines of every unit but the target: after the network (and `after`), part of corral.target. */
function unitHead(description: string, documentation: string, after: readonly string[] = []): string[] {
  return [
    `Description=${description}`,
    `Documentation=${documentation}`,
    "Wants=network-online.target",
    `After=${["network-online.target", ...after].join(" ")}`,
    "PartOf=corral.target",
    // Restart for good: never give up after a burst of failed starts (NATS away for a minute).
    "StartLimitIntervalSec=0",
  ];
}

/** nats-server or redis-server as `corral`, its data in /var/lib/<stateDirectory>. */
function serverUnit(o: { description: string; documentation: string; stateDirectory: string; exec: string[] }): string {
  return unitFile({
    Unit: unitHead(o.description, o.documentation),
    Service: [
      "Type=simple",
      ...RUN_AS,
      `StateDirectory=${o.stateDirectory}`,
      ...o.exec,
      "KillSignal=SIGTERM",
      "TimeoutStopSec=60",
      "LimitNOFILE=65536",
      ...RESTART,
      ...HARDENING,
      ...NO_SANDBOXES,
    ],
    Install: ["WantedBy=corral.target"],
  });
}

function natsUnit(): string {
  return serverUnit({
    description: "NATS server with JetStream for Corral",
    documentation: "https://docs.nats.io/running-a-nats-service/configuration",
    // store_dir of the nats-server.conf `npm run deploy-config` writes.
    stateDirectory: "corral/nats",
    // SIGTERM (KillSignal) makes nats-server flush JetStream and leave the cluster cleanly.
    exec: [
      // servers.ts NATS_SERVER_GOGC: less of the server's CPU in garbage collection.
      `Environment=GOGC=${NATS_SERVER_GOGC}`,
      `ExecStart=${natsServer} -c ${configDir}/nats/nats-server.conf`,
      "ExecReload=/bin/kill -HUP $MAINPID",
    ],
  });
}

function redisUnit(): string {
  return serverUnit({
    description: "Redis for Corral (append-only file, fsync every second)",
    documentation: "https://redis.io/docs/latest/operate/oss_and_stack/management/persistence/",
    // `dir` in deploy/redis/redis.conf.
    stateDirectory: "corral/redis",
    exec: [`ExecStart=${redisServer} ${installDir}/deploy/redis/redis.conf`],
  });
}

/** Creates the streams, buckets and object stores a provisioner needs and may not create itself (bus-setup.ts). */
function busSetupUnit(): string {
  return unitFile({
    Unit: unitHead("Corral: create the JetStream streams, buckets and object stores", `file://${installDir}/docs/operations.md`, ["corral-nats.service"]),
    Service: [
      "Type=oneshot",
      "RemainAfterExit=yes",
      ...RUN_AS,
      `WorkingDirectory=${installDir}`,
      // The admin user: the only one that may create streams.
      `Environment=CORRAL_CONFIG=${configDir}/admin.properties`,
      `EnvironmentFile=-${configDir}/corral.env`,
      BUILD_CHECK,
      `ExecStart=${node} ${nodeArgsOf("deploy/src/commands/bus-setup.ts", "compiled").join(" ")}`,
      // NATS may still be electing a JetStream leader: try again rather than fail the boot.
      "Restart=on-failure",
      "RestartSec=5",
      ...HARDENING,
      ...NO_SANDBOXES,
    ],
    Install: ["WantedBy=corral.target"],
  });
}

function target(): string {
  return unitFile({
    Unit: [
      "Description=Corral: every Corral unit enabled on this machine",
      `Documentation=file://${installDir}/docs/operations.md`,
      "Wants=network-online.target",
      "After=network-online.target",
    ],
    Install: ["WantedBy=multi-user.target"],
  });
}

function unitFile(sections: Record<string, string[]>): string {
  const body = Object.entries(sections).map(([section, lines]) => [`[${section}]`, ...lines].join("\n"));
  return `${HEADER}\n\n${body.join("\n\n")}\n`;
}
