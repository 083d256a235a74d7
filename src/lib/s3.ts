/**
 * Presigned S3 URLs (SigV4 query signing with `aws4fetch`) for the documents bucket: R2's S3
 * endpoint in production, the dev server's own S3 endpoint under `npm run dev`
 * (src/modules/dev/s3.ts, which checks them with `verifyPresigned`). The server picks the key; the
 * content type of an upload is a signed header, so the client must send exactly the declared type.
 */
import { AwsClient } from "aws4fetch";
import type { Config } from "../config";
import { timingSafeEqual } from "./crypto";
import { type Message, m } from "./message";

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

const clientFor = (s3: Config["s3"]) =>
  new AwsClient({ accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey, service: "s3", region: s3.region });

export function s3Signer(s3: Config["s3"]): UrlSigner {
  const client = clientFor(s3);
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

/** S3's own limit on `X-Amz-Expires` (7 days). */
const MAX_EXPIRES_SECONDS = 7 * 24 * 3600;
/** How far in the future a signing time may be (clock skew), as S3 allows. */
const MAX_SKEW_MS = 15 * 60 * 1000;
const AMZ_DATE = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/;
const QUERY_AUTH = ["X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders"];

/** Why a presigned request is refused, named like S3's error codes. */
export interface Refusal {
  code: "AuthorizationQueryParametersError" | "InvalidAccessKeyId" | "AccessDenied" | "SignatureDoesNotMatch";
  message: Message;
}

/**
 * Checks a request made with a presigned URL as S3 would: the query parameters, the access key and
 * scope, the validity window against `now`, and the signature, recomputed with aws4fetch over the
 * request's method, URL and the values of the headers it claims were signed (so an upload with
 * another content type, a changed key or an added parameter fails). Uploads must sign their
 * content type. Returns the refusal, or null when the request is authentic and current.
 */
export async function verifyPresigned(
  s3: Config["s3"],
  request: { method: string; url: string; headers: Headers },
  now: Date,
): Promise<Refusal | null> {
  const url = new URL(request.url);
  const q = url.searchParams;
  const refuse = (code: Refusal["code"], message: Message): Refusal => ({ code, message });
  if ([...QUERY_AUTH, "X-Amz-Signature"].some((name) => q.getAll(name).length !== 1)) {
    return refuse(
      "AuthorizationQueryParametersError",
      m`A presigned URL carries ${QUERY_AUTH.join(", ")} and X-Amz-Signature once each`,
    );
  }
  const param = (name: string) => q.get(name) ?? "";
  if (param("X-Amz-Algorithm") !== "AWS4-HMAC-SHA256") {
    return refuse("AuthorizationQueryParametersError", m`X-Amz-Algorithm must be AWS4-HMAC-SHA256`);
  }
  const date = param("X-Amz-Date");
  const d = AMZ_DATE.exec(date);
  if (!d) return refuse("AuthorizationQueryParametersError", m`X-Amz-Date must be like 20261123T150000Z`);
  const signedAt = Date.UTC(Number(d[1]), Number(d[2]) - 1, Number(d[3]), Number(d[4]), Number(d[5]), Number(d[6]));
  const expires = param("X-Amz-Expires");
  const seconds = /^\d{1,7}$/.test(expires) ? Number(expires) : 0;
  if (seconds < 1 || seconds > MAX_EXPIRES_SECONDS) {
    return refuse("AuthorizationQueryParametersError", m`X-Amz-Expires must be 1 to ${MAX_EXPIRES_SECONDS} seconds`);
  }
  const [accessKeyId, ...scope] = param("X-Amz-Credential").split("/");
  if (!timingSafeEqual(accessKeyId ?? "", s3.accessKeyId)) {
    return refuse("InvalidAccessKeyId", m`The access key id in X-Amz-Credential is not known here`);
  }
  if (scope.join("/") !== `${date.slice(0, 8)}/${s3.region}/s3/aws4_request`) {
    return refuse(
      "AuthorizationQueryParametersError",
      m`X-Amz-Credential must be scoped to its date/${s3.region}/s3/aws4_request`,
    );
  }
  if (now.getTime() < signedAt - MAX_SKEW_MS) return refuse("AccessDenied", m`Request is not yet valid`);
  if (now.getTime() >= signedAt + seconds * 1000) return refuse("AccessDenied", m`Request has expired`);
  const signedHeaders = param("X-Amz-SignedHeaders").split(";");
  if (!signedHeaders.includes("host"))
    return refuse("AuthorizationQueryParametersError", m`X-Amz-SignedHeaders must include host`);
  if (request.method === "PUT" && !signedHeaders.includes("content-type")) {
    return refuse("AccessDenied", m`An upload URL must sign its content-type`);
  }

  // Recompute: the same URL without its signature, the signed headers with the values received.
  const unsigned = new URL(url);
  unsigned.searchParams.delete("X-Amz-Signature");
  const headers = new Headers();
  for (const name of signedHeaders) if (name !== "host") headers.set(name, request.headers.get(name) ?? "");
  // A URL and init, not a Request: aws4fetch would read (and refuse) a body for a GET with content-type.
  const expected = await clientFor(s3).sign(unsigned.href, {
    method: request.method,
    headers,
    aws: { signQuery: true, datetime: date, allHeaders: true },
  });
  const signature = new URL(expected.url).searchParams.get("X-Amz-Signature") ?? "";
  if (!timingSafeEqual(signature, param("X-Amz-Signature"))) {
    return refuse(
      "SignatureDoesNotMatch",
      m`The signature does not match the request: check the method, the URL and the content-type sent`,
    );
  }
  return null;
}
