/** The ec2 provider's pieces that need no server: its spec, settings, names, tokens and the console's host keys. */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import test from "ava";
import { generateSshKeyPair } from "@corral/provisioner/sdk";
import type { TaskMessage } from "@corral/contracts";
import { BEGIN_HOST_KEYS, clientToken, consoleHostKeys, EC2_SPEC, END_HOST_KEYS, keyPairName, optionsFromEnv, readSettings } from "../src/index.js";
import { loginUser } from "../src/settings.js";

const config = (provisioner: Record<string, string>, extra: Partial<TaskMessage["config"]> = {}) =>
  ({ config: { provider: { name: "p", providertype: "ec2", provisioner }, ...extra } }) as Pick<TaskMessage, "config">;

test("the spec has the admin fields of the issue, the credentials sensitive, region required, a user key pair field", (t) => {
  const admin = EC2_SPEC.parameters?.admin;
  t.deepEqual(Object.keys(admin?.fields ?? {}).sort(), [
    "access_key_id",
    "associate_public_ip",
    "endpoint",
    "region",
    "secret_access_key",
    "security_group_ids",
    "ssh_user",
    "subnet_id",
    "trust_host_key_on_first_use",
  ]);
  const sensitive = Object.entries(admin?.fields ?? {}).filter(([, f]) => f.sensitive).map(([name]) => name).sort();
  t.deepEqual(sensitive, ["access_key_id", "secret_access_key"]);
  t.deepEqual(admin?.required, [["region"]]);
  t.deepEqual(Object.keys(EC2_SPEC.parameters?.user?.fields ?? {}), ["key_name"]);
  t.is(EC2_SPEC.name, "ec2");
});

test("settings: defaults, lists, flags, and errors that never repeat a secret", (t) => {
  const read = readSettings(config({ region: " eu-west-1 ", security_group_ids: "sg-1, sg-2,,", associate_public_ip: "TRUE" }));
  if (!read.ok) return t.fail(read.error);
  t.deepEqual(read.settings, { region: "eu-west-1", securityGroupIds: ["sg-1", "sg-2"], sshUser: "admin", associatePublicIp: true, trustHostKeyOnFirstUse: false });

  const full = readSettings(config({ region: "r", endpoint: "http://127.0.0.1:1", access_key_id: "AK", secret_access_key: "SK", subnet_id: "subnet-1", ssh_user: "ubuntu", trust_host_key_on_first_use: "yes", key_name: "mine" }));
  if (!full.ok) return t.fail(full.error);
  t.like(full.settings, { endpoint: "http://127.0.0.1:1", credentials: { accessKeyId: "AK", secretAccessKey: "SK" }, subnetId: "subnet-1", sshUser: "ubuntu", trustHostKeyOnFirstUse: true, userKeyName: "mine" });
  t.false("associatePublicIp" in full.settings, "no associate_public_ip: the subnet decides");

  const failures = [
    [{}, /region is not set/],
    [{ region: "r", endpoint: "ftp://x" }, /endpoint "ftp:\/\/x" is not an http\(s\) URL/],
    [{ region: "r", secret_access_key: "very-secret" }, /give both access_key_id and secret_access_key/],
    [{ region: "r", associate_public_ip: "maybe" }, /associate_public_ip is "maybe"; give true or false/],
  ] as const;
  for (const [fields, message] of failures) {
    const r = readSettings(config(fields));
    t.false(r.ok);
    if (!r.ok) {
      t.regex(r.error, message);
      t.notRegex(r.error, /very-secret/);
    }
  }
});

test("the login user is the image type's sshuser, else the provider's ssh_user", (t) => {
  const read = readSettings(config({ region: "r", ssh_user: "debian" }));
  if (!read.ok) return t.fail(read.error);
  t.is(loginUser(config({}), read.settings), "debian");
  t.is(loginUser(config({}, { sshuser: "ec2-user" }), read.settings), "ec2-user");
});

test("client tokens: one per dispatch and task name, stable across redeliveries, at most 64 characters", (t) => {
  const task = { tenant: "acme", taskId: "c1-001-0004", dispatch: 1, taskName: "CREATE" as const };
  const token = clientToken("inst", task);
  t.true(token.length <= 64);
  t.regex(token, /^[\x21-\x7e]+$/);
  t.is(clientToken("inst", { ...task }), token, "a redelivery of the dispatch");
  t.not(clientToken("inst", { ...task, dispatch: 2 }), token, "the next attempt");
  t.not(clientToken("inst", { ...task, taskName: "DELETE" }), token, "another step of a rollback");
  t.not(clientToken("other", task), token, "another installation");
});

test("key pair names: after tenant and cluster, valid, unique per installation", (t) => {
  const name = keyPairName("inst", "acme corp", "00000042");
  t.regex(name, /^corral-acme_corp-00000042-[0-9a-f]{10}$/);
  t.not(keyPairName("inst", "acme_corp", "00000042"), name, "names that sanitise alike differ");
  t.not(keyPairName("other", "acme corp", "00000042"), name);
  t.true(keyPairName("i", "t".repeat(200), "c".repeat(200)).length <= 255);
});

test("host keys are read from the last complete block cloud-init printed, whatever the line prefixes", (t) => {
  const ed = generateSshKeyPair().publicKey.split(" ");
  const other = generateSshKeyPair().publicKey.split(" ");
  const output = [
    "[    3.1] cloud-init[512]: some boot line ssh-ed25519 AAAAnotakey",
    BEGIN_HOST_KEYS,
    `${other[0]} ${other[1]} root@old`,
    END_HOST_KEYS,
    "rebooting",
    `${BEGIN_HOST_KEYS}\r`,
    `[   12.3] ${ed[0]} ${ed[1]} root@ip-10-0-0-1\r`,
    "ssh-rsa bm90IGEga2V5 root@x\r",
    "garbage line\r",
    `${END_HOST_KEYS}\r`,
    "Cloud-init v. 22.4 finished",
  ].join("\n");
  t.deepEqual(consoleHostKeys(output), { "ssh-ed25519": ed[1] }, "the blob that does not name its algorithm is skipped");
  t.is(consoleHostKeys(`${BEGIN_HOST_KEYS}\n${ed.join(" ")}\n`), undefined, "an unfinished block");
  t.is(consoleHostKeys(`${BEGIN_HOST_KEYS}\n${END_HOST_KEYS}\n`), undefined, "an empty block");
  t.is(consoleHostKeys(""), undefined);
});

test("options from the provisioner's environment", (t) => {
  t.deepEqual(optionsFromEnv({}), {});
  t.deepEqual(optionsFromEnv({ CORRAL_EC2_CONFIRM_TIMEOUT_MS: "5000", CORRAL_EC2_SWEEP_INTERVAL_MS: "0", CORRAL_EC2_ORPHAN_GRACE_MS: " 10 ", CORRAL_EC2_MAX_ATTEMPTS: "1" }), {
    confirmTimeoutMs: 5000,
    sweepIntervalMs: 0,
    orphanGraceMs: 10,
    maxAttempts: 1,
  });
  t.throws(() => optionsFromEnv({ CORRAL_EC2_POLL_MS: "soon" }), { message: /CORRAL_EC2_POLL_MS=soon is not a number/ });
});

test("loading the module does not load the AWS SDK: a provisioner without ec2 tasks never pays for it", async (t) => {
  const script = [
    'import { createRequire } from "node:module";',
    "const require = createRequire(import.meta.url);",
    'const { default: factories } = await import("@corral/provider-ec2");',
    'const sdkLoaded = Object.keys(require.cache).some((k) => k.includes("@aws-sdk/client-ec2"));',
    "console.log(JSON.stringify({ factories: factories.length, sdkLoaded }));",
  ].join("\n");
  const { stdout } = await promisify(execFile)(process.execPath, ["--import=tsx", "--input-type=module", "-e", script], { cwd: new URL("..", import.meta.url) });
  t.deepEqual(JSON.parse(stdout), { factories: 1, sdkLoaded: false });
});
