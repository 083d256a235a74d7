/** Mobile version: the latest and minimum supported app version per platform. */
import { z } from "@hono/zod-openapi";
import type { Ctx } from "../../lib/context";
import { badRequest } from "../../lib/errors";
import { m, zodMessage } from "../../lib/message";
import { defineRoute, type InputOf, json, operation } from "../../lib/route";

const Platform = z.enum(["ios", "android"]);
const Version = z.string().regex(/^\d+(\.\d+){0,2}$/, zodMessage(m`Expected a version like 1.4.0`));
const Range = z.object({
  latest: z.string().openapi({ example: "1.4.0", description: "The latest version in the store" }),
  minimum: z.string().openapi({ example: "1.2.0", description: "The oldest version the API still serves" }),
});

const Answer = z
  .object({
    ios: Range.openapi({ description: "The iOS app's versions" }),
    android: Range.openapi({ description: "The Android app's versions" }),
    check: z
      .object({
        platform: Platform,
        version: z.string().openapi({ description: "The version asked about" }),
        mustUpdate: z.boolean().openapi({ description: "Older than the minimum supported version" }),
        updateAvailable: z.boolean().openapi({ description: "Older than the latest version" }),
      })
      .optional()
      .openapi({ description: "The verdict on the version asked about (`platform` and `version` given)" }),
  })
  .openapi("AppVersion");

/** Compares dotted versions numerically: -1, 0 or 1. */
export function compareVersions(a: string, b: string): number {
  const pa = a.split(".").map(Number);
  const pb = b.split(".").map(Number);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return Math.sign(d);
  }
  return 0;
}

const version = defineRoute({
  method: "get",
  path: "/api/v1/version",
  tag: "Operations",
  operationId: "getAppVersion",
  summary: "Mobile app versions, and whether a given app must update",
  access: "public",
  database: false,
  request: {
    query: z.strictObject({
      platform: Platform.optional(),
      version: Version.optional().openapi({ example: "1.3.0", description: "The app's version, to get a verdict on" }),
    }),
  },
  responses: { 200: json(Answer, "Versions per platform") },
});

/** The versions per platform and, for a platform and version sent, whether that app must update. */
export function appVersion(ctx: Ctx, { query }: InputOf<typeof version>) {
  const { platform, version: current } = query;
  const versions = ctx.deps.config.appVersions;
  if ((platform === undefined) !== (current === undefined)) {
    throw badRequest(m`Send platform and version together`, [
      { path: platform === undefined ? "platform" : "version", message: m`Required with the other` },
    ]);
  }
  const range = platform && current ? versions[platform] : undefined;
  const answer = {
    ...versions,
    ...(platform && current && range
      ? {
          check: {
            platform,
            version: current,
            mustUpdate: compareVersions(current, range.minimum) < 0,
            updateAvailable: compareVersions(current, range.latest) < 0,
          },
        }
      : {}),
  };
  // Clients may keep it five minutes: versions change with a release, not per request.
  return Response.json(answer, { headers: { "cache-control": "public, max-age=300" } });
}

export const getAppVersion = operation(version, appVersion);
