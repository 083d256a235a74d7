/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com): the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`, HMAC-SHA256 with the secret's bytes, sent as
 * `v1,<base64>`; several signatures (during a secret's rotation) are separated by spaces.
 */
import { secretBytes } from "./secret";

const encoder = new TextEncoder();

export async function sign(secret: string, msgId: string, timestamp: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`${msgId}.${timestamp}.${body}`)));
  let bin = "";
  for (const b of mac) bin += String.fromCharCode(b);
  return `v1,${btoa(bin)}`;
}

/** The three headers of a delivery, signed with each secret given (the current one first). */
export async function signedHeaders(
  secrets: readonly string[],
  msgId: string,
  at: Date,
  body: string,
): Promise<Record<string, string>> {
  const timestamp = Math.floor(at.getTime() / 1000);
  const signatures = await Promise.all(secrets.map((s) => sign(s, msgId, timestamp, body)));
  return {
    "content-type": "application/json",
    "webhook-id": msgId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signatures.join(" "),
  };
}
