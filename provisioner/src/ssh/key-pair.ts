import ssh2 from "ssh2";

/** An SSH key pair in OpenSSH formats. */
export interface SshKeyPair {
  privateKey: string;
  publicKey: string;
}

/**
 * A new ed25519 key pair. ssh2's generator now and then (about 1 in 200) writes an ed25519 private key its own
 * parser rejects as malformed, so every pair is parsed back and a bad one replaced.
 */
export function generateSshKeyPair(comment?: string): SshKeyPair {
  for (let attempt = 0; attempt < 20; attempt++) {
    const pair = ssh2.utils.generateKeyPairSync("ed25519", comment ? { comment } : {});
    if (!(ssh2.utils.parseKey(pair.private) instanceof Error)) return { privateKey: pair.private, publicKey: pair.public };
  }
  throw new Error("could not generate a usable ed25519 key pair");
}
