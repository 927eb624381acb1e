import anyTest, { type TestFn } from "ava";
import { spawnSync } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api } from "../helpers/api.js";
import { startSystem, type TestSystem } from "../helpers/system.js";
import { bearer, startTokenServer, httpsGet } from "../helpers/tokens.js";

/** The token server over TLS, from a PEM or PKCS#12 keystore made here with the openssl CLI. */
const test = anyTest as TestFn<{ sys: TestSystem; dir: string; cert: Buffer }>;

const openssl = spawnSync("openssl", ["version"], { encoding: "utf8" });
const hasOpenssl = openssl.status === 0;
const tlsTest = hasOpenssl ? test : test.skip;
if (!hasOpenssl) console.warn("auth-tls: the openssl CLI is not available, so the TLS token server tests are skipped");

function run(args: string[], cwd: string): void {
  const r = spawnSync("openssl", args, { cwd, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`openssl ${args.join(" ")} failed: ${r.stderr}`);
}

test.before(async (t) => {
  t.context.dir = await mkdtemp(join(tmpdir(), "corral-tls-test-"));
  await writeFile(join(t.context.dir, "realm.properties"), "admin: adminpw,superadmin\n");
  if (hasOpenssl) {
    run(
      ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "key.pem", "-out", "cert.pem", "-days", "1",
        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1"],
      t.context.dir,
    );
    run(["pkcs12", "-export", "-in", "cert.pem", "-inkey", "key.pem", "-out", "keystore.p12", "-passout", "pass:storepw"], t.context.dir);
    t.context.cert = await readFile(join(t.context.dir, "cert.pem"));
    const key = await readFile(join(t.context.dir, "key.pem"));
    await writeFile(join(t.context.dir, "keystore.pem"), Buffer.concat([t.context.cert, key]));
  }
  // A JKS file starts with the magic 0xFEEDFEED.
  await writeFile(join(t.context.dir, "keystore.jks"), Buffer.from([0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2]));
  t.context.sys = await startSystem({ security: { authService: false } });
});
test.after.always(async (t) => {
  await t.context.sys?.stop();
  if (t.context.dir) await rm(t.context.dir, { recursive: true, force: true });
});

/** This file's token servers read the realm file written in \`before\`. */
const tokenServer = (t: Parameters<typeof startTokenServer>[0], config: Record<string, string | number | boolean>) =>
  startTokenServer(t, { "security.authentication.basic.realmfile": "realm.properties", ...config });

const basic = { authorization: `Basic ${Buffer.from("admin:adminpw").toString("base64")}` };

tlsTest("tls - a PEM keystore serves tokens over https, and the gateway accepts them", async (t) => {
  const svc = await tokenServer(t, { "security.auth.server.ssl.keystore.path": "keystore.pem" });
  t.regex(svc.tokenUrl, /^https:\/\/127\.0\.0\.1:\d+\/token$/);
  const r = await httpsGet(svc.tokenUrl, basic, { ca: t.context.cert });
  t.is(r.status, 200, r.text);
  const token = JSON.parse(r.text).access_token as string;
  const tenants = await api(t.context.sys.baseUrl, "GET", "/tenants", { user: "admin", tenant: "superadmin", headers: bearer(token) });
  t.is(tenants.status, 200, tenants.text);
  await t.throwsAsync(fetch(svc.tokenUrl.replace("https:", "http:"), { headers: basic }), undefined, "no plain http");
  await t.throwsAsync(httpsGet(svc.tokenUrl, basic, {}), { message: /self[- ]signed/i }, "an unknown CA is refused by the client");
});

tlsTest("tls - a PKCS#12 keystore opens with its password; a wrong password fails the start", async (t) => {
  const svc = await tokenServer(t, {
    "security.auth.server.ssl.keystore.path": "keystore.p12",
    "security.auth.server.ssl.keystore.password": "storepw",
    "security.auth.server.ssl.keystore.type": "PKCS12",
  });
  t.is((await httpsGet(svc.tokenUrl, basic, { ca: t.context.cert })).status, 200);
  const err = await t.throwsAsync(
    tokenServer(t, { "security.auth.server.ssl.keystore.path": "keystore.p12", "security.auth.server.ssl.keystore.password": "nope" }),
  );
  t.regex(err?.message ?? "", /cannot open the keystore/);
});

test("tls - a Java keystore (JKS) is refused at start with a conversion hint", async (t) => {
  const err = await t.throwsAsync(tokenServer(t, { "security.auth.server.ssl.keystore.path": "keystore.jks" }));
  t.regex(err?.message ?? "", /Java keystore \(JKS\).*keytool -importkeystore/s);
});
