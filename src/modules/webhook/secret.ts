/**
 * Webhook signing secrets: made here (`whsec_` + base64 of 24 random bytes, as the Standard Webhooks
 * libraries expect), shown once, and stored encrypted (AES-GCM) under a key derived (HKDF-SHA-256)
 * from the service's AUTH_SECRET: the service must read them back to sign, so a hash would not do,
 * and a copy of the database alone does not give them away.
 */
const encoder = new TextEncoder();
const VERSION = "v1";

const keys = new Map<string, Promise<CryptoKey>>();

function keyOf(authSecret: string): Promise<CryptoKey> {
  let key = keys.get(authSecret);
  if (!key) {
    key = (async () => {
      const base = await crypto.subtle.importKey("raw", encoder.encode(authSecret), "HKDF", false, ["deriveKey"]);
      return crypto.subtle.deriveKey(
        { name: "HKDF", hash: "SHA-256", salt: new Uint8Array(0), info: encoder.encode("webhook-secret v1") },
        base,
        { name: "AES-GCM", length: 256 },
        false,
        ["encrypt", "decrypt"],
      );
    })();
    keys.set(authSecret, key);
  }
  return key;
}

const toBase64 = (bytes: Uint8Array) => {
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
};
const fromBase64 = (text: string) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));

/** A new signing secret, as the receiver configures it. */
export function newSecret(): string {
  return `whsec_${toBase64(crypto.getRandomValues(new Uint8Array(24)))}`;
}

/** The secret's bytes: the HMAC key (the part after `whsec_`, base64). */
export function secretBytes(secret: string): Uint8Array<ArrayBuffer> {
  return fromBase64(secret.slice("whsec_".length));
}

export async function sealSecret(authSecret: string, secret: string): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt({ name: "AES-GCM", iv }, await keyOf(authSecret), encoder.encode(secret));
  const out = new Uint8Array(iv.length + sealed.byteLength);
  out.set(iv);
  out.set(new Uint8Array(sealed), iv.length);
  return `${VERSION}:${toBase64(out)}`;
}

export async function openSecret(authSecret: string, stored: string): Promise<string> {
  const [version, body] = stored.split(":");
  if (version !== VERSION || !body) throw new Error("webhook secret: unknown storage format");
  const bytes = fromBase64(body);
  const plain = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: bytes.slice(0, 12) },
    await keyOf(authSecret),
    bytes.slice(12),
  );
  return new TextDecoder().decode(plain);
}
