/**
 * People's phone numbers and email addresses are their own permission (`user.contact`): reading a
 * person (`user.read`, `teacher.read`, ...) shows who they are, not how to reach them. Without it a
 * caller sees them masked, in every people read and export: `+52•••••••34` (the country code's
 * first digits and the last two kept, so staff can tell two numbers apart and confirm one read out
 * to them) and `a•••@example.com` (the first letter and the domain).
 *
 * Always shown: one's own, and what a route's own rule adds (`also`): a parent's own children's
 * trusted people, a delegate's parent (and `parent.contact` for parents and delegates, as before).
 */
import type { SchoolCtx } from "../../lib/context";
import { permissions } from "./permissions";

const DOT = "•";

/** `+525512345634` -> `+52•••••••••34`: the first three and last two characters kept. */
export function maskPhone(phone: string): string {
  if (phone.length <= 5) return DOT.repeat(phone.length);
  return `${phone.slice(0, 3)}${DOT.repeat(phone.length - 5)}${phone.slice(-2)}`;
}

/** `ana@example.com` -> `a•••@example.com`: the first character and the domain kept. */
export function maskEmail(email: string): string {
  const at = email.lastIndexOf("@");
  return at <= 0 ? `${email.slice(0, 1)}${DOT.repeat(3)}` : `${email.slice(0, 1)}${DOT.repeat(3)}${email.slice(at)}`;
}

/** The OpenAPI description of a person's phone and email fields. */
export const MASKED_CONTACT =
  "Masked (+15•••••••03, a•••@example.com) without user.contact, unless it is the caller's own";

/** The caller sees this person's contact: with `user.contact`, their own, or by the route's own rule. */
export const seesContact = (ctx: SchoolCtx, userId: number | null, also = false): boolean =>
  also || ctx.can(permissions.contact) || (userId !== null && ctx.userId === userId);

/** A person's phone and email (either may be absent) as this caller may see them. */
export function contactOf<T extends { phone?: string | null; email?: string | null }>(
  ctx: SchoolCtx,
  userId: number | null,
  contact: T,
  also = false,
): T {
  if (seesContact(ctx, userId, also)) return contact;
  const out = { ...contact };
  if (typeof out.phone === "string") out.phone = maskPhone(out.phone);
  if (typeof out.email === "string") out.email = maskEmail(out.email);
  return out;
}
