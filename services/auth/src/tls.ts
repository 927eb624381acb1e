import { readFileSync } from "node:fs";
import { createSecureContext, type SecureContextOptions } from "node:tls";

/** The `security.auth.server.ssl.keystore.*` properties. */
export interface KeystoreSettings {
  path: string;
  password: string;
  keyPassword: string;
  /** `JKS` (the Coopr default), `PKCS12`, `PEM`: only a hint, the file's content decides. */
  type: string;
}

/**
 * TLS material for the token server from a keystore file. Node cannot read Java keystores (JKS, JCEKS);
 * convert one with `keytool -importkeystore -srcstoretype JKS -deststoretype PKCS12`. Accepted:
 * - PEM: a file holding the certificate chain and the private key (an encrypted key is opened with
 *   `keypassword`, else `password`);
 * - PKCS#12 (`.p12`, `.pfx`): opened with `password` (Node uses one passphrase for the store and its key).
 * The default type `JKS` is ignored when the file is PEM or PKCS#12, so only the path needs changing.
 * Problems (unreadable file, JKS, wrong password) fail the start with a message saying which.
 */
export function loadKeystore(settings: KeystoreSettings): SecureContextOptions | undefined {
  if (!settings.path) return undefined;
  let bytes: Buffer;
  try {
    bytes = readFileSync(settings.path);
  } catch (err) {
    throw new Error(`cannot read the keystore ${settings.path}: ${(err as Error).message}`, { cause: err });
  }
  const magic = bytes.length >= 4 ? bytes.readUInt32BE(0) : 0;
  if (magic === 0xfeedfeed || magic === 0xcececece) {
    throw new Error(
      `the keystore ${settings.path} is a Java keystore (${magic === 0xfeedfeed ? "JKS" : "JCEKS"}), which Node cannot read; ` +
        "convert it with `keytool -importkeystore -srcstoretype JKS -deststoretype PKCS12` or use a PEM file",
    );
  }
  let options: SecureContextOptions;
  const text = bytes.toString("latin1");
  if (text.includes("-----BEGIN")) {
    const blocks = (label: RegExp) =>
      [...text.matchAll(/-----BEGIN ([A-Z0-9 ]+)-----[\s\S]*?-----END \1-----/g)].filter((m) => label.test(m[1]!)).map((m) => m[0]);
    const certs = blocks(/CERTIFICATE$/);
    const keys = blocks(/PRIVATE KEY$/);
    if (certs.length === 0 || keys.length === 0) {
      throw new Error(`the PEM keystore ${settings.path} must hold a certificate and a private key`);
    }
    const passphrase = settings.keyPassword || settings.password;
    options = { cert: certs.join("\n"), key: keys[0]!, ...(passphrase ? { passphrase } : {}) };
  } else if (bytes[0] === 0x30) {
    options = { pfx: bytes, ...(settings.password ? { passphrase: settings.password } : {}) };
  } else {
    throw new Error(`the keystore ${settings.path} is neither PEM nor PKCS#12 (type ${settings.type || "unset"})`);
  }
  try {
    createSecureContext(options);
  } catch (err) {
    throw new Error(`cannot open the keystore ${settings.path}: ${(err as Error).message}`, { cause: err });
  }
  return options;
}
