/**
 * Access tokens: short-lived HS256 JWTs that carry who the caller is and, per school, the bitmap
 * of permission ids their roles grant (see `PermissionSet`) and the set of application modules the
 * school has disabled (`ModuleSet`), and the languages of the user and of each school (the language a
 * request is answered in without an `Accept-Language`). Authorising a request therefore needs no database round trip;
 * role changes and module toggles take effect at the next refresh (at most ACCESS_TTL).
 */
import { sign, verify } from "hono/jwt";
import { z } from "zod";
import { LANGUAGES, type Language } from "./language";

export const ACCESS_TTL_SECONDS = 10 * 60;

export interface AccessClaims {
  sub: string;
  /** Platform super-admin. */
  sa?: 1;
  /** schoolId -> permission bitmap (base64url). A key with "" is a membership without permissions. */
  sch: Record<string, string>;
  /** schoolId -> bitmap of the built-in application modules it has disabled; only schools with some. */
  off?: Record<string, string>;
  /** The user's own language (src/lib/language.ts); absent from tokens minted before it was carried. */
  lng?: Language;
  /** schoolId -> the school's language, for each school of `sch`. */
  sl?: Record<string, Language>;
  typ: "access";
  iat: number;
  exp: number;
}

const Claims = z.object({
  sub: z.string().regex(/^[1-9]\d*$/),
  sa: z.literal(1).optional(),
  sch: z.record(z.string().regex(/^[1-9]\d*$/), z.string()),
  off: z.record(z.string().regex(/^[1-9]\d*$/), z.string()).optional(),
  lng: z.enum(LANGUAGES).optional(),
  sl: z.record(z.string().regex(/^[1-9]\d*$/), z.enum(LANGUAGES)).optional(),
  typ: z.literal("access"),
  iat: z.number(),
  exp: z.number(),
}) satisfies z.ZodType<AccessClaims>;

export async function signAccessToken(
  secret: string,
  now: Date,
  claims: {
    userId: number;
    isSuperAdmin: boolean;
    schools: Record<string, string>;
    disabledModules?: Record<string, string>;
    language?: Language;
    schoolLanguages?: Record<string, Language>;
  },
): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  const payload: AccessClaims = {
    sub: String(claims.userId),
    ...(claims.isSuperAdmin ? { sa: 1 as const } : {}),
    sch: claims.schools,
    ...(claims.disabledModules && Object.keys(claims.disabledModules).length > 0
      ? { off: claims.disabledModules }
      : {}),
    ...(claims.language ? { lng: claims.language } : {}),
    ...(claims.schoolLanguages && Object.keys(claims.schoolLanguages).length > 0 ? { sl: claims.schoolLanguages } : {}),
    typ: "access",
    iat,
    exp: iat + ACCESS_TTL_SECONDS,
  };
  return sign({ ...payload }, secret, "HS256");
}

/**
 * Tokens this isolate has verified, with their claims: a token's claims are fixed by its signature,
 * so a token seen before needs only its secret and expiry checked (a caller sends the same token for
 * up to ACCESS_TTL; the HMAC and the claims' parse cost more than the rest of a read's framework).
 * Bounded: the oldest entry goes first.
 */
const verified = new Map<string, { secret: string; claims: Readonly<AccessClaims> }>();
const MAX_VERIFIED = 1000;

/** Returns the claims of a valid, unexpired access token, or null. */
export async function verifyAccessToken(secret: string, token: string, now: Date): Promise<AccessClaims | null> {
  const seen = verified.get(token);
  if (seen && seen.secret === secret) return seen.claims.exp * 1000 <= now.getTime() ? null : seen.claims;
  try {
    const payload = await verify(token, secret, { alg: "HS256", exp: false, iat: false, nbf: false });
    // A signed token is ours, but its shape is still checked: never trust a claim's type.
    const parsed = Claims.safeParse(payload);
    if (!parsed.success) return null;
    const claims = Object.freeze(parsed.data);
    if (verified.size >= MAX_VERIFIED) {
      const oldest = verified.keys().next();
      if (!oldest.done) verified.delete(oldest.value);
    }
    verified.set(token, { secret, claims });
    return claims.exp * 1000 <= now.getTime() ? null : claims;
  } catch {
    return null;
  }
}
