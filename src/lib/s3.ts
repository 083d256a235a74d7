/**
 * Presigned S3 URLs (SigV4 query signing with `aws4fetch`) for the documents bucket: R2's S3
 * endpoint in production, any S3-compatible server locally. The server picks the key; the content
 * type of an upload is a signed header, so the client must send exactly the declared type.
 */
import { AwsClient } from "aws4fetch";
import type { Config } from "../config";

export interface SignedUrl {
  url: string;
  method: "GET" | "PUT";
  expiresAt: string;
  /** Headers the client must send with the request (the signed content type of an upload). */
  headers: Record<string, string>;
}

export interface UrlSigner {
  sign(input: {
    key: string;
    method: "GET" | "PUT";
    contentType?: string;
    expiresIn: number;
    now: Date;
  }): Promise<SignedUrl>;
}

const encodeKey = (key: string) => key.split("/").map(encodeURIComponent).join("/");

/** AMZ date for a clock instant: 20261121T215300Z. */
const amzDate = (d: Date) => d.toISOString().replace(/[:-]|\.\d{3}/g, "");

export function s3Signer(s3: Config["s3"]): UrlSigner {
  const client = new AwsClient({
    accessKeyId: s3.accessKeyId,
    secretAccessKey: s3.secretAccessKey,
    service: "s3",
    region: s3.region,
  });
  return {
    async sign({ key, method, contentType, expiresIn, now }) {
      const url = new URL(`${s3.endpoint}/${s3.bucket}/${encodeKey(key)}`);
      url.searchParams.set("X-Amz-Expires", String(expiresIn));
      const headers: Record<string, string> = method === "PUT" && contentType ? { "content-type": contentType } : {};
      const signed = await client.sign(new Request(url, { method, headers }), {
        aws: { signQuery: true, datetime: amzDate(now), allHeaders: true },
      });
      return {
        url: signed.url,
        method,
        expiresAt: new Date(now.getTime() + expiresIn * 1000).toISOString(),
        headers,
      };
    },
  };
}
