/**
 * The request and answer shapes of presigned URLs (documents, school logos, group images, trusted
 * people's images): one definition, so every signed-URL route reads alike. Signing: ./s3.ts.
 */
import { z } from "@hono/zod-openapi";
import { m } from "./message";

/** The fields of every presigned-URL answer (with what the URL is for, per route). */
export const signedUrlFields = (seconds: number, contentType = "image/png") => ({
  url: z.url().openapi({ description: "The presigned URL" }),
  method: z
    .enum(["GET", "PUT"])
    .openapi({ description: "The method the URL is signed for: PUT to upload, GET to download" }),
  expiresAt: z.iso.datetime().openapi({ description: `When the URL stops working (${seconds} s)` }),
  headers: z
    .record(z.string(), z.string())
    .openapi({ description: "Headers to send with the request", example: { "content-type": contentType } }),
});

/**
 * The body of "a URL to upload (PUT, the default: a new `noun`) or download (GET) an image": the
 * content type is required to upload and refused to download (400 naming `contentType`).
 */
export function imageUrlBody<T extends string>(types: readonly [T, ...T[]], noun: string) {
  return z
    .object({
      method: z
        .enum(["GET", "PUT"])
        .default("PUT")
        .openapi({ description: `PUT to upload a new ${noun} (default), GET to download` }),
      contentType: z.enum(types).optional().openapi({
        description: "The image's type; required to upload (the upload must send exactly this content-type)",
        example: "image/png",
      }),
    })
    .strict()
    .superRefine((v, issue) => {
      if (v.method === "PUT" && v.contentType === undefined) {
        issue.addIssue({ code: "custom", path: ["contentType"], message: m`Required to upload (method PUT)`.render() });
      }
      if (v.method === "GET" && v.contentType !== undefined) {
        issue.addIssue({ code: "custom", path: ["contentType"], message: m`Only for uploads (method PUT)`.render() });
      }
    });
}
