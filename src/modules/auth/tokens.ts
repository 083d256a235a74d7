/**
 * Access tokens: short-lived HS256 JWTs that carry who the caller is and, per school, the bitmap
 * of permission ids their roles grant (see `PermissionSet`). Authorising a request therefore needs
 * no database round trip; role changes take effect at the next refresh (at most ACCESS_TTL).
 */
import { sign, verify } from "hono/jwt";

export const ACCESS_TTL_SECONDS = 10 * 60;

export interface AccessClaims {
  sub: string;
  /** Platform super-admin. */
  sa?: 1;
  /** schoolId -> permission bitmap (base64url). A key with "" is a membership without permissions. */
  sch: Record<string, string>;
  typ: "access";
  iat: number;
  exp: number;
}

export async function signAccessToken(
  secret: string,
  now: Date,
  claims: { userId: number; isSuperAdmin: boolean; schools: Record<string, string> },
): Promise<string> {
  const iat = Math.floor(now.getTime() / 1000);
  const payload: AccessClaims = {
    sub: String(claims.userId),
    ...(claims.isSuperAdmin ? { sa: 1 as const } : {}),
    sch: claims.schools,
    typ: "access",
    iat,
    exp: iat + ACCESS_TTL_SECONDS,
  };
  return sign({ ...payload }, secret, "HS256");
}

/** Returns the claims of a valid, unexpired access token, or null. */
export async function verifyAccessToken(secret: string, token: string, now: Date): Promise<AccessClaims | null> {
  try {
    const payload = (await verify(token, secret, {
      alg: "HS256",
      exp: false,
      iat: false,
      nbf: false,
    })) as unknown as AccessClaims;
    if (payload.typ !== "access" || typeof payload.sub !== "string" || typeof payload.sch !== "object") return null;
    if (typeof payload.exp !== "number" || payload.exp * 1000 <= now.getTime()) return null;
    return payload;
  } catch {
    return null;
  }
}
