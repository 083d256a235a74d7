/** Auth: sign in by verification code, refresh with rotation, sign out. */
import { z } from "@hono/zod-openapi";
import { m, zodMessage } from "../../lib/message";
import { currentRequest } from "../../lib/metrics";
import { Phone } from "../../lib/phone";
import { defineRoute, json, jsonBody, noContent, operation } from "../../lib/route";
import { UserSchema } from "../user/api";
import * as auth from "./service";

const Session = z
  .object({
    accessToken: z.string().openapi({ description: "Send it as `Authorization: Bearer <accessToken>`" }),
    refreshToken: z
      .string()
      .openapi({ description: "Trade it for a new session at /api/v1/auth/refresh-token (once: it rotates)" }),
    tokenType: z.literal("Bearer").openapi({ description: "Always Bearer" }),
    expiresIn: z.number().int().openapi({ description: "Seconds until the access token expires" }),
    user: UserSchema,
  })
  .openapi("Session");

const PhoneBody = z.strictObject({ phone: Phone });
const PhoneCheckBody = z.strictObject({ phone: Phone });
const RefreshBody = z.strictObject({ refreshToken: z.string().min(1).max(200) });

const sendCode = defineRoute({
  method: "post",
  path: "/api/v1/auth/send-verification-code",
  tag: "Auth",
  operationId: "sendVerificationCode",
  summary: "Send a sign-in code by SMS",
  description:
    "Answers 202 whether or not the number belongs to a user. Per number a resend cooldown and an hourly cap (by default one code a minute, five an hour): 429 with retry-after.",
  access: "public",
  errors: [429, 503],
  examples: { 429: "Wait 42 s before asking for another code" },
  request: { body: jsonBody(PhoneBody, "SendCodeRequest") },
  responses: {
    202: json(
      z
        .object({
          sent: z
            .literal(true)
            .openapi({ description: "Always true: the answer does not say whether the number may sign in" }),
          expiresIn: z.number().int().openapi({ description: "Seconds the code stays valid" }),
          resendIn: z.number().int().openapi({ description: "Seconds before another code may be asked for" }),
        })
        .openapi("CodeSent"),
      "A code was sent if the number may sign in",
    ),
  },
});

const verifyCode = defineRoute({
  method: "post",
  path: "/api/v1/auth/verify-code",
  tag: "Auth",
  operationId: "verifyCode",
  summary: "Exchange a code for a session",
  description:
    "401 for a wrong, expired or used code. A code allows 5 attempts; after them even the right code is a 429: ask for a new one.",
  access: "public",
  errors: [401, 429],
  examples: {
    401: { title: "Invalid code", detail: "No valid code for this number; request a new one" },
    429: { title: "Too many attempts", detail: "Too many wrong attempts; request a new code" },
  },
  request: {
    body: jsonBody(
      z.strictObject({
        phone: Phone,
        code: z
          .string()
          .regex(/^\d{6}$/, zodMessage(m`Expected 6 digits`))
          .openapi({ example: "123456", description: "The 6 digits of the SMS" }),
      }),
      "VerifyCodeRequest",
    ),
  },
  responses: { 200: json(Session, "Signed in") },
});

const verifyPhone = defineRoute({
  method: "post",
  path: "/api/v1/auth/verify-phone-number",
  tag: "Auth",
  operationId: "verifyPhoneNumber",
  summary: "Say whether a number belongs to a user who may sign in",
  description:
    "Limited per number and per client address (by default 10 an hour per number, 30 per 10 minutes per address): 429 with retry-after.",
  access: "public",
  errors: [429],
  examples: { 429: "Too many number checks; try again later" },
  request: { body: jsonBody(PhoneCheckBody, "PhoneCheckRequest") },
  responses: {
    200: json(
      z
        .object({
          phone: z.string().openapi({ description: "The number as the API reads it (E.164)" }),
          registered: z.boolean().openapi({ description: "Whether it belongs to an active or invited user" }),
        })
        .openapi("PhoneCheck"),
      "Whether it is registered",
    ),
  },
});

const refreshToken = defineRoute({
  method: "post",
  path: "/api/v1/auth/refresh-token",
  tag: "Auth",
  operationId: "refreshToken",
  summary: "Rotate a refresh token for a new session",
  description: "The presented token is spent; presenting it again ends the whole session family (401).",
  access: "public",
  errors: [401],
  request: { body: jsonBody(RefreshBody, "RefreshTokenRequest") },
  responses: { 200: json(Session, "A new access token and refresh token") },
});

const logout = defineRoute({
  method: "post",
  path: "/api/v1/auth/logout",
  tag: "Auth",
  operationId: "logout",
  summary: "Revoke the session of a refresh token",
  access: "public",
  request: { body: jsonBody(RefreshBody, "LogoutRequest") },
  responses: { 204: noContent },
});

const logoutAll = defineRoute({
  method: "post",
  path: "/api/v1/auth/logout-all",
  tag: "Auth",
  operationId: "logoutAll",
  summary: "Revoke every session of the signed-in user",
  access: "user",
  responses: { 204: noContent },
});

export const operations = [
  operation(sendCode, (ctx, { body }) => auth.sendVerificationCode(ctx.deps, body.phone)),
  operation(verifyCode, (ctx, { body }) => auth.verifyCode(ctx, body.phone, body.code)),
  // The per-address limit counts the client's address (cf-connecting-ip), kept with the request's state.
  operation(verifyPhone, (ctx, { body }) =>
    auth.verifyPhoneNumber(ctx.deps, body.phone, currentRequest()?.clientAddress),
  ),
  operation(refreshToken, (ctx, { body }) => auth.refresh(ctx, body.refreshToken)),
  operation(logout, (ctx, { body }) => auth.logout(ctx.deps, body.refreshToken)),
  operation(logoutAll, (ctx) => auth.revokeAll(ctx.deps, ctx.userId ?? 0)),
];
