import { execFile } from "node:child_process";
import { chmod, mkdtemp, rm, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";

const run = promisify(execFile);

/** A CA's certificate and key, PEM files. */
export interface CertificateAuthority {
  certFile: string;
  keyFile: string;
}

const KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];

async function openssl(args: string[]): Promise<void> {
  try {
    await run("openssl", args);
  } catch (err) {
    const e = err as { code?: string; stderr?: string };
    if (e.code === "ENOENT") throw new Error("openssl is not installed (apt-get install openssl), or give your own CA with --ca-cert and --ca-key");
    throw new Error(`openssl ${args[0]} failed: ${e.stderr ?? String(err)}`);
  }
}

/** Makes a CA (P-256 key, ten years) as `<dir>/ca.pem` and `<dir>/ca-key.pem` (mode 0600). */
export async function makeCertificateAuthority(dir: string, name: string): Promise<CertificateAuthority> {
  const ca = { certFile: join(dir, "ca.pem"), keyFile: join(dir, "ca-key.pem") };
  await openssl(["req", "-x509", ...KEY, "-keyout", ca.keyFile, "-out", ca.certFile, "-days", "3650", "-subj", `/CN=${name}`]);
  await chmod(ca.keyFile, 0o600);
  return ca;
}

/**
 * A certificate signed by `ca` for `hosts` (IP addresses or DNS names, all in its subjectAltName), good for both
 * ends of TLS: nats-server presents it to clients and, on cluster routes, to the other servers. Writes
 * `<dir>/<name>-cert.pem` and `<dir>/<name>-key.pem` (mode 0600).
 */
export async function makeCertificate(
  ca: CertificateAuthority,
  dir: string,
  name: string,
  hosts: readonly string[],
): Promise<{ certFile: string; keyFile: string }> {
  const out = { certFile: join(dir, `${name}-cert.pem`), keyFile: join(dir, `${name}-key.pem`) };
  const work = await mkdtemp(join(tmpdir(), "corral-tls-"));
  try {
    const csr = join(work, "req.csr");
    const ext = join(work, "ext.cnf");
    const names = [...new Set(hosts)].map((h) => (isIP(h) ? `IP:${h}` : `DNS:${h}`));
    await writeFile(
      ext,
      [
        `subjectAltName=${names.join(",")}`,
        "basicConstraints=CA:FALSE",
        "keyUsage=digitalSignature,keyEncipherment",
        "extendedKeyUsage=serverAuth,clientAuth",
        "",
      ].join("\n"),
    );
    await openssl(["req", ...KEY, "-keyout", out.keyFile, "-out", csr, "-subj", `/CN=${hosts[0] ?? name}`]);
    await chmod(out.keyFile, 0o600);
    const serial = join(work, "ca.srl");
    const signing = ["-CA", ca.certFile, "-CAkey", ca.keyFile, "-CAserial", serial, "-CAcreateserial"];
    await openssl(["x509", "-req", "-in", csr, ...signing, "-out", out.certFile, "-days", "825", "-extfile", ext]);
  } finally {
    await rm(work, { recursive: true, force: true });
  }
  return out;
}
