import { createHmac, randomBytes } from "node:crypto";
import { WEBHOOK_SECRET_PREFIX } from "@corral/contracts";

/** Bytes of a generated signing key. */
const KEY_BYTES = 32;

/** A new secret: `whsec_` and the base64 of a random key (Standard Webhooks). */
export function generateSecret(): string {
  return WEBHOOK_SECRET_PREFIX + randomBytes(KEY_BYTES).toString("base64");
}

/** The headers that sign one attempt of a delivery: `webhook-signature` is `v1,` and the base64 HMAC-SHA256 of `id.timestamp.body`. */
export function signedHeaders(secret: string, id: string, timestampSeconds: number, body: string): Record<string, string> {
  const key = Buffer.from(secret.slice(WEBHOOK_SECRET_PREFIX.length), "base64");
  const signature = createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64");
  return { "webhook-id": id, "webhook-timestamp": String(timestampSeconds), "webhook-signature": `v1,${signature}` };
}
