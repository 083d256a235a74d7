/** Sign-in codes and sessions. */
import { index, integer, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { createdAt, users } from "./core";

/** One-time sign-in codes: only an HMAC of the code is stored. */
export const verificationCodes = sqliteTable(
  "verification_code",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    phone: text("phone").notNull(),
    codeHash: text("code_hash").notNull(),
    attempts: integer("attempts").notNull().default(0),
    expiresAt: text("expires_at").notNull(),
    consumedAt: text("consumed_at"),
    createdAt: createdAt(),
  },
  (t) => [
    index("verification_code_phone_idx").on(t.phone, t.createdAt),
    index("verification_code_expires_idx").on(t.expiresAt),
  ],
);

/**
 * Refresh tokens, stored as SHA-256 hashes. Rotation: each use revokes the token and issues a new
 * one of the same `family`; presenting a revoked token revokes the whole family (theft detection).
 */
export const refreshTokens = sqliteTable(
  "refresh_token",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    userId: integer("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    tokenHash: text("token_hash").notNull(),
    family: text("family").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    createdAt: createdAt(),
  },
  (t) => [
    uniqueIndex("refresh_token_hash_uq").on(t.tokenHash),
    index("refresh_token_family_idx").on(t.family),
    index("refresh_token_user_idx").on(t.userId),
    index("refresh_token_expires_idx").on(t.expiresAt),
  ],
);
