import { execFile } from "node:child_process";
import { access, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import test from "ava";
import { defaultStateDir, repoRoot } from "@corral/deploy";
import { ensureInstalled, ensureNatsServer, ensureRedisServer, which } from "../src/binaries.js";
import { isUnitFile, SYSTEMD_LAYOUT, systemdUnits } from "../src/systemd-units.js";

const exec = promisify(execFile);
const unitsDir = join(repoRoot, "deploy", "systemd");

/** systemd-analyze, installed with apt-get (package systemd) when missing. */
const analyze = (): Promise<string> => ensureInstalled(defaultStateDir(), ["systemd"], () => which("systemd-analyze"));

/**
 * The units as committed, in a temporary directory, with each program path the units name replaced by where this
 * machine has it when it is elsewhere (verify fails on a missing ExecStart or ExecStartPre program; a fresh machine
 * may have nats-server only in the launcher's download cache).
 */
async function unitsForThisMachine(dir: string): Promise<string[]> {
  // The servers are found as the launcher finds them: a new enough system binary, else the cached download.
  const locate: Record<string, () => Promise<string | undefined>> = {
    [SYSTEMD_LAYOUT.node]: () => which("node"),
    [SYSTEMD_LAYOUT.natsServer]: () => ensureNatsServer(),
    [SYSTEMD_LAYOUT.redisServer]: () => ensureRedisServer(),
  };
  const found = new Map<string, string>();
  for (const [path, find] of Object.entries(locate)) {
    const here = (await exists(path)) ? path : await find();
    if (here) found.set(path, here);
  }
  const names = (await readdir(unitsDir)).filter(isUnitFile);
  for (const name of names) {
    let text = await readFile(join(unitsDir, name), "utf8");
    for (const [path, here] of found) {
      text = text.replaceAll(`ExecStart=${path} `, `ExecStart=${here} `).replaceAll(`ExecStartPre=${path} `, `ExecStartPre=${here} `);
    }
    await writeFile(join(dir, name), text);
  }
  return names;
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Template units by the name of an instance: `corral-clusters@.service` -> `corral-clusters@2.service`. */
const instance = (name: string, id: string): string => name.replace("@.", `@${id}.`);

test("systemd - deploy/systemd holds exactly the units deploy/src/systemd-units.ts makes", async (t) => {
  const committed = (await readdir(unitsDir)).filter(isUnitFile).sort();
  const made = systemdUnits();
  t.deepEqual(committed, [...made.keys()].sort(), "run node --import=tsx deploy/bin/systemd-units.ts");
  for (const name of committed) {
    t.is(await readFile(join(unitsDir, name), "utf8"), made.get(name) ?? "", `${name} differs; run node --import=tsx deploy/bin/systemd-units.ts`);
  }
  const templates = committed.filter((n) => n.includes("@."));
  t.deepEqual(
    templates,
    ["auth", "clusters", "gateway", "metrics", "plugins", "provisioner", "solver", "tenancy", "webhooks"].map((s) => `corral-${s}@.service`),
  );
});

test("systemd - systemd-analyze verify accepts every unit, two instances of each service, without a warning", async (t) => {
  const systemdAnalyze = await analyze();
  const dir = await mkdtemp(join(tmpdir(), "corral-systemd-"));
  try {
    const names = await unitsForThisMachine(dir);
    const toVerify = names.flatMap((n) => (n.includes("@.") ? [instance(n, "1"), instance(n, "2")] : [n]));
    const { stdout, stderr } = await exec(systemdAnalyze, ["verify", "--man=no", ...toVerify.map((n) => `./${n}`)], { cwd: dir });
    t.is(stderr.trim(), "", "verify warns");
    t.is(stdout.trim(), "");
    t.true(toVerify.includes("corral-clusters@2.service"));

    // The same check does fail: an unknown key and a missing program.
    const broken = "corral-solver@.service";
    const text = await readFile(join(dir, broken), "utf8");
    await writeFile(join(dir, broken), text.replace(/^ExecStart=\S+/m, "ExecStart=/nonexistent/node\nRestartt=always"));
    const failure = await exec(systemdAnalyze, ["verify", "--man=no", `./${instance(broken, "1")}`], { cwd: dir }).then(
      () => undefined,
      (err: { stderr: string }) => err.stderr,
    );
    t.regex(failure ?? "", /Unknown key 'Restartt'/);
    t.regex(failure ?? "", /\/nonexistent\/node is not executable/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test("systemd - hardened: exposure at most 2.0 (systemd-analyze security), the provisioner's at most 5.0", async (t) => {
  const systemdAnalyze = await analyze();
  for (const name of [...systemdUnits().keys()].filter((n) => n.endsWith(".service"))) {
    // --threshold counts tenths: 20 is an exposure of 2.0.
    const threshold = name.startsWith("corral-provisioner@") ? 50 : 20;
    const result = await exec(systemdAnalyze, ["security", "--offline=true", `--threshold=${threshold}`, "--no-pager", join(unitsDir, name)]).then(
      ({ stdout }) => ({ ok: true, stdout }),
      (err: { stdout: string }) => ({ ok: false, stdout: err.stdout }),
    );
    t.true(result.ok, `${name}: ${result.stdout.trim().split("\n").pop()}`);
  }
});

test("systemd - each service reads its own connection file (deploy-config's), its own and its instance's environment, and restarts always", (t) => {
  for (const [name, text] of systemdUnits()) {
    if (!name.includes("@.")) continue;
    const service = name.slice("corral-".length, name.indexOf("@"));
    t.true(text.includes(`\nEnvironment=CORRAL_CONFIG=${SYSTEMD_LAYOUT.configDir}/${service}.properties\n`), name);
    t.true(text.includes(`\nEnvironmentFile=-${SYSTEMD_LAYOUT.configDir}/${service}.env\n`), name);
    t.true(text.includes(`\nEnvironmentFile=-${SYSTEMD_LAYOUT.configDir}/${service}@%i.env\n`), name);
    t.true(text.includes("\nRestart=always\n"), name);
    t.true(text.includes("\nPartOf=corral.target\n") && text.includes("\nWantedBy=corral.target\n"), name);
  }
});
