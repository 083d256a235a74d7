/**
 * The school's pickup-pass key: an Ed25519 key pair per school, derived, never stored. Its seed is
 * HMAC-SHA256(AUTH_SECRET, "pickup-pass:v1:<schoolId>"): the same key on every isolate and
 * location without a table or a migration, different per school, and no school's key tells
 * another's. The private key lives only inside this file's functions: it is never answered, logged
 * or stored. Changing AUTH_SECRET changes every school's key (gate devices fetch the new public
 * key; passes already issued stop verifying), as it ends every session.
 *
 * A pass is a compact JWS (`alg: EdDSA`), so a gate device verifies it offline with the public key
 * (`GET /api/v1/exit-permission/pass-key`) and any JOSE library, or Web Crypto as `verifyPass` does.
 */
import { z } from "@hono/zod-openapi";
import { parseJson } from "../../lib/json";

const VERSION = "v1";
/** PKCS #8 wrapping of a raw Ed25519 private key (RFC 8410): this prefix, then the 32-byte seed. */
const PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

export interface PassKey {
  kid: string;
  jwk: { kty: "OKP"; crv: "Ed25519"; x: string; kid: string; alg: "EdDSA"; use: "sig" };
}

const encoder = new TextEncoder();

export function base64url(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

export function fromBase64url(s: string): Uint8Array<ArrayBuffer> {
  const bin = atob(s.replace(/-/g, "+").replace(/_/g, "/"));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

/** The school's key id: which school and which derivation a pass was signed with. */
export const kidOf = (schoolId: number) => `school-${schoolId}-${VERSION}`;

async function seedOf(secret: string, schoolId: number): Promise<Uint8Array> {
  const key = await crypto.subtle.importKey("raw", encoder.encode(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return new Uint8Array(await crypto.subtle.sign("HMAC", key, encoder.encode(`pickup-pass:${VERSION}:${schoolId}`)));
}

/** The school's key pair: the private key (not extractable once made) and the public JWK. */
async function keyPair(secret: string, schoolId: number): Promise<{ privateKey: CryptoKey; publicKey: PassKey }> {
  const der = new Uint8Array([...PKCS8_PREFIX, ...(await seedOf(secret, schoolId))]);
  // Extractable only to read the public half (`x`) from its JWK; `d` is dropped right here.
  const exportable = await crypto.subtle.importKey("pkcs8", der, { name: "Ed25519" }, true, ["sign"]);
  const exported = await crypto.subtle.exportKey("jwk", exportable);
  const x = exported instanceof ArrayBuffer ? undefined : exported.x;
  if (!x) throw new Error("Ed25519 JWK without x");
  const privateKey = await crypto.subtle.importKey("pkcs8", der, { name: "Ed25519" }, false, ["sign"]);
  const kid = kidOf(schoolId);
  return { privateKey, publicKey: { kid, jwk: { kty: "OKP", crv: "Ed25519", x, kid, alg: "EdDSA", use: "sig" } } };
}

/** The school's public key, as a gate device is configured with it. */
export async function passKey(secret: string, schoolId: number): Promise<PassKey> {
  return (await keyPair(secret, schoolId)).publicKey;
}

/** A pass: `payload` signed with the school's private key, as a compact JWS. */
export async function signPass(secret: string, schoolId: number, payload: object): Promise<string> {
  const { privateKey, publicKey } = await keyPair(secret, schoolId);
  const header = base64url(encoder.encode(JSON.stringify({ alg: "EdDSA", typ: "JWT", kid: publicKey.kid })));
  const body = base64url(encoder.encode(JSON.stringify(payload)));
  const signature = await crypto.subtle.sign("Ed25519", privateKey, encoder.encode(`${header}.${body}`));
  return `${header}.${body}.${base64url(new Uint8Array(signature))}`;
}

/**
 * What a gate device does: checks a pass's signature with the public key alone, and its time box.
 * Answers the payload, or null for a forged, altered or expired pass.
 */
export async function verifyPass(
  jwk: PassKey["jwk"],
  token: string,
  now: Date,
): Promise<Record<string, unknown> | null> {
  const [header, body, signature] = token.split(".");
  if (!header || !body || !signature) return null;
  const key = await crypto.subtle.importKey("jwk", jwk, { name: "Ed25519" }, false, ["verify"]);
  const valid = await crypto.subtle
    .verify("Ed25519", key, fromBase64url(signature), encoder.encode(`${header}.${body}`))
    .catch(() => false);
  if (!valid) return null;
  const payload = parseJson(z.unknown(), new TextDecoder().decode(fromBase64url(body)));
  if (typeof payload !== "object" || payload === null) return null;
  const claims: Record<string, unknown> = Object.fromEntries(Object.entries(payload));
  const seconds = now.getTime() / 1000;
  if (typeof claims.exp !== "number" || seconds >= claims.exp) return null;
  if (typeof claims.nbf === "number" && seconds < claims.nbf) return null;
  return claims;
}
