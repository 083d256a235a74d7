/**
 * Invitations to join the school in the app: a text with the school's name and the app link
 * (`config.appShareUrl`), through `deps.sms`.
 *
 * Every request is counted against the school's limit (INVITE_REQUESTS_PER_HOUR, one upsert: no
 * check-then-act), texts at most MAX_RECIPIENTS people, texts each person once however often the
 * request names them, and skips whoever cannot sign in (inactive) or was texted by this school in
 * the last INVITE_COOLDOWN_SECONDS. The people to text are *claimed* by one conditional UPDATE of
 * `school_user.invited_at` (with an audit row per person, entity `user-invite`), so two requests
 * racing over the same person text them once; the texts go out after that batch.
 */

import { resolveUsers, userAnchors } from "../../db/anchors";
import { Batch } from "../../db/batch";
import { RoleUsers, roleUsers, Schools, schools, Users, users } from "../../db/schema/core";
import { SchoolUsers, schoolUsers } from "../../db/schema/user";
import { and, asc, eq, isNull, lte, or, sql } from "../../db/sql";
import { commit, inList, type Statement } from "../../db/write";
import type { SchoolCtx } from "../../lib/context";
import { ApiError, notFound } from "../../lib/errors";
import { languageFrom } from "../../lib/language";
import { m } from "../../lib/message";
import { hit } from "../../lib/rate-limit";
import { contactOf } from "./contact";
import { copyOnAdd } from "./identity";
import { live } from "./members";
import { checkRoles, joinSchool } from "./service";

export const INVITE_REQUESTS_PER_HOUR = 30;
export const INVITE_COOLDOWN_SECONDS = 3600;
export const MAX_RECIPIENTS = 100;

export type SkipReason = "inactive" | "recently-invited" | "delivery-failed";
export interface InviteResult {
  sent: number;
  skipped: { userId: number | null; phone: string; reason: SkipReason }[];
  /** People the request matched beyond MAX_RECIPIENTS: ask again to text them. */
  remaining: number;
}

/** An invitation is recorded as the user's `user-invite` (not an edit of the person). */
const Invites = Users.as("user-invite");

/** The link to join a school in the app. */
export const shareUrl = (ctx: SchoolCtx) => {
  const url = new URL(ctx.deps.config.appShareUrl);
  url.searchParams.set("school", String(ctx.schoolId));
  return url.toString();
};

/** The message to share the link with, naming the school. */
export const shareText = (school: string, url: string) => m`Join ${school} in the app: ${url}`;

/**
 * The link to join the current school and a message to share it with, in the request's language
 * (src/lib/language.ts: the caller's own without Accept-Language): the school's name in one read.
 */
export async function shareLink(ctx: SchoolCtx) {
  const { db } = ctx.deps;
  const [school] = await db.select({ name: schools.name }).from(schools).where(eq(schools.id, ctx.schoolId)).limit(1);
  const url = shareUrl(ctx);
  return { url, text: shareText(school?.name ?? "", url).render() };
}

/** The SMS that invites someone: written in their own language, not the sender's. */
export const inviteText = (school: string, url: string) =>
  m`${school} invites you to its app. Sign in with this phone number: ${url}`;

/** Counts the request against the school's limit: 429 with retry-after when it is used up. */
async function limit(ctx: SchoolCtx) {
  const { allowed, retryAfter } = await hit(
    ctx.deps.db,
    `user-invite:${ctx.schoolId}`,
    INVITE_REQUESTS_PER_HOUR,
    3600,
    ctx.deps.clock.now(),
  );
  if (!allowed) {
    throw new ApiError(429, m`At most ${INVITE_REQUESTS_PER_HOUR} invitation requests per school per hour`, {
      headers: { "retry-after": String(retryAfter) },
    });
  }
}

interface Candidate {
  userId: number;
  phone: string;
  language: string;
  status: string;
  invitedAt: string | null;
}

/**
 * Claims and texts `candidates` (members of the school), after `before` (statements that make them
 * members). One batch: before, the audit rows, the claim; then the texts.
 */
async function send(
  ctx: SchoolCtx,
  candidates: Candidate[],
  before: Statement[] = [],
  remaining = 0,
): Promise<InviteResult> {
  const { db, clock } = ctx.deps;
  const at = clock.now();
  const cutoff = new Date(at.getTime() - INVITE_COOLDOWN_SECONDS * 1000).toISOString();
  const skipped: InviteResult["skipped"] = [];
  const seen = new Set<number>();
  const chosen: Candidate[] = [];
  for (const c of candidates) {
    if (seen.has(c.userId)) continue;
    seen.add(c.userId);
    if (c.status === "inactive") skipped.push({ userId: c.userId, phone: c.phone, reason: "inactive" });
    else chosen.push(c);
  }
  const ids = chosen.map((c) => c.userId);
  const claimable = and(
    live(ctx),
    inList(schoolUsers.userId, ids),
    or(isNull(schoolUsers.invitedAt), lte(schoolUsers.invitedAt, cutoff)),
  );
  const batch = new Batch(ctx).add(
    ...before,
    ...Invites.action(
      ctx,
      and(inList(users.id, ids), SchoolUsers.exists(ctx, eq(schoolUsers.userId, users.id), claimable)),
      // When the school last texted them: the claim's change.
      {
        action: "invite",
        changes: {
          invitedAt: {
            old: SchoolUsers.pick(ctx, schoolUsers.invitedAt, eq(schoolUsers.userId, users.id)),
            new: at.toISOString(),
          },
        },
      },
    ),
  );
  // The claim itself is the audited invite (its audit row above), not an edit of the membership.
  const claim = batch.result(
    db
      .update(schoolUsers)
      .set({ invitedAt: at.toISOString(), updatedAt: at.toISOString() })
      .where(claimable)
      .returning({ userId: schoolUsers.userId }),
  );
  const school = batch.read(Schools.select(ctx, { name: schools.name }).where(eq(schools.id, ctx.schoolId)).limit(1));
  const results = await batch.commit();
  const claimed = new Set(results.get(claim).map((r) => r.userId));
  const name = results.get(school)[0]?.name ?? "";
  const url = shareUrl(ctx);
  let sent = 0;
  for (const c of chosen) {
    if (!claimed.has(c.userId)) {
      skipped.push({ userId: c.userId, phone: c.phone, reason: "recently-invited" });
      continue;
    }
    try {
      await ctx.deps.sms.send(c.phone, inviteText(name, url).render(languageFrom(c.language) ?? "en"));
      sent++;
    } catch {
      skipped.push({ userId: c.userId, phone: c.phone, reason: "delivery-failed" });
    }
  }
  // Phones are contact data: masked without user.contact (./contact.ts).
  return { sent, skipped: skipped.map((s) => ({ ...s, ...contactOf(ctx, s.userId, { phone: s.phone }) })), remaining };
}

const candidateFields = {
  userId: users.id,
  phone: users.phone,
  language: users.language,
  status: users.status,
  invitedAt: schoolUsers.invitedAt,
};

/**
 * Invites people by phone to join the school: unknown numbers become invited users, everyone
 * becomes a member (with no role yet: "pending"; see assignPendingToParents) and is texted.
 */
export async function inviteToSchool(ctx: SchoolCtx, phones: readonly string[]): Promise<InviteResult> {
  await limit(ctx);
  const unique = [...new Set(phones)];
  // Two steps (docs/scaling.md "Shards", group B): unknown numbers become invited users in the
  // platform database (one batch, answering every number's user), then the school's batch.
  const resolved = await resolveUsers(
    ctx,
    unique,
    unique.map((phone) => ({ phone, firstName: "", lastName: "", email: null, language: "es" })),
  );
  const created = [...resolved.created];
  const before: Statement[] = [...(await userAnchors(ctx, resolved.rows))];
  if (created.length) {
    before.push(
      ...Users.action(ctx, inList(users.id, created), {
        action: "create",
        changes: { phone: { old: null, new: sql`${users.phone}` }, status: { old: null, new: "invited" } },
      }),
    );
  }
  for (const user of resolved.rows) {
    // A number another school may know: this school sees no name of theirs (an empty copy) until
    // it names them or the person edits their own profile (./identity.ts).
    if (!resolved.created.has(user.id) && user.deletedAt === null) before.push(...copyOnAdd(ctx, user.id, {}));
    before.push(joinSchool(ctx, user.id));
  }
  // The members as the school sees them now (its database: the anchors on a shard), to text.
  const [first, ...rest] = before;
  if (first) await commit(ctx, [first, ...rest]);
  const members = await Users.select(ctx, candidateFields)
    .join(SchoolUsers, eq(schoolUsers.userId, users.id))
    .where(inList(users.phone, unique), isNull(users.deletedAt))
    .all();
  return send(ctx, members);
}

/**
 * Invites the members holding `roleId` who have never signed in (status invited), those texted
 * longest ago (or never) first, MAX_RECIPIENTS at a time (`remaining` says how many wait).
 */
export async function inviteInactive(ctx: SchoolCtx, roleId: number): Promise<InviteResult> {
  // A role this school does not have (unknown, another school's, super-admin) is a 404, not "nobody".
  await checkRoles(ctx, [roleId]);
  await limit(ctx);
  const candidates = RoleUsers.select(ctx, candidateFields)
    .join(Users, eq(users.id, roleUsers.userId))
    .join(SchoolUsers, eq(schoolUsers.userId, roleUsers.userId))
    .where(eq(roleUsers.roleId, roleId), eq(users.status, "invited"), isNull(schoolUsers.deletedAt));
  const read = new Batch(ctx);
  const rowsSlot = read.read(
    candidates
      .orderBy(sql`${schoolUsers.invitedAt} IS NOT NULL`, asc(schoolUsers.invitedAt), asc(roleUsers.id))
      .limit(MAX_RECIPIENTS),
  );
  const totalSlot = read.read(candidates.count());
  const answer = await read.commit();
  const rows = answer.get(rowsSlot);
  const total = answer.get(totalSlot);
  return send(ctx, rows, [], Math.max(0, (total[0]?.n ?? 0) - rows.length));
}

/** Invites specific members of the school (an id that is not one: 404 naming it, nobody texted). */
export async function inviteUsers(ctx: SchoolCtx, userIds: readonly number[]): Promise<InviteResult> {
  await limit(ctx);
  const ids = [...new Set(userIds)];
  const rows = await SchoolUsers.select(ctx, candidateFields)
    .join(Users, eq(users.id, schoolUsers.userId))
    .where(isNull(schoolUsers.deletedAt), inList(schoolUsers.userId, ids))
    .all();
  const found = new Set(rows.map((r) => r.userId));
  const missing = ids.filter((id) => !found.has(id));
  if (missing.length)
    throw notFound(
      missing.length === 1 ? m`User ${missing.join(", ")} not found` : m`Users ${missing.join(", ")} not found`,
    );
  return send(ctx, rows);
}
