/**
 * A thin typed client for the API: openapi-fetch over the types generated from the OpenAPI
 * document (client/api.d.ts, `npm run client`). It adds what every caller of this API needs:
 * the bearer token, the `X-School-Id` header, one refresh on a 401 (POST
 * /api/v1/auth/refresh-token, which rotates the refresh token) before retrying the request once,
 * and the D1 bookmark: the `x-d1-bookmark` of the latest answer is sent with the next request, so
 * the app reads what it wrote even when a read replica serves it (keep it with `onBookmark`).
 *
 * @example
 * const api = createSchoolClient({ baseUrl: "https://api.example.com", tokens, onTokens: save });
 * const { data, error } = await api.GET("/api/v1/user/me");
 * if (error) console.log(error.type, error.detail); // a Problem (RFC 9457)
 */
import createClient, { type Client, type Middleware } from "openapi-fetch";
import type { components, paths } from "./api";

export type { components, operations, paths } from "./api";
export type Problem = components["schemas"]["Problem"];
export type Session = components["schemas"]["Session"];

export interface Tokens {
  accessToken: string;
  refreshToken: string;
}

export interface SchoolClientOptions {
  /** The API's origin, e.g. `https://api.example.com` (no `/api/v1`: paths carry it). */
  baseUrl: string;
  /** The tokens of an earlier sign-in, if the app kept them. */
  tokens?: Tokens;
  /** Sent as `X-School-Id` (callers with roles in several schools must name one). */
  schoolId?: number;
  /** Called when the tokens change: after a refresh, or `undefined` when the refresh failed (sign in again). */
  onTokens?: (tokens: Tokens | undefined) => void;
  /** The D1 bookmark the app kept from an earlier answer (`onBookmark`), sent with the first request. */
  bookmark?: string;
  /** Called with each new `x-d1-bookmark` an answer carries: keep it (with the tokens) across restarts. */
  onBookmark?: (bookmark: string) => void;
  /** Replaces `fetch` (tests pass the app's own `fetch`). */
  fetch?: (request: Request) => Promise<Response>;
}

export type SchoolClient = Client<paths> & {
  /** The current tokens (after a sign-in, a refresh, or none). */
  readonly tokens: Tokens | undefined;
  /** Keeps the tokens of a sign-in (`verify-code`'s answer), or forgets them (sign-out). */
  setTokens(tokens: Tokens | undefined): void;
  /** Changes the school sent as `X-School-Id`. */
  setSchool(schoolId: number | undefined): void;
  /** The latest D1 bookmark an answer carried (sent as `x-d1-bookmark` with every request). */
  readonly bookmark: string | undefined;
};

const BOOKMARK = "x-d1-bookmark";

/** Sign-in and refresh: no bearer token, and a 401 there is an answer, not a reason to refresh. */
const isAuthPath = (schemaPath: string) => schemaPath.startsWith("/api/v1/auth/");

export function createSchoolClient(options: SchoolClientOptions): SchoolClient {
  const client = createClient<paths>({
    baseUrl: options.baseUrl,
    // `sort=-createdAt,name`: query arrays are comma-separated, as the document declares them (style form, explode false).
    querySerializer: { array: { style: "form", explode: false } },
    ...(options.fetch && { fetch: options.fetch }),
  });
  let tokens = options.tokens;
  let schoolId = options.schoolId;
  let bookmark = options.bookmark;
  /** One refresh at a time: refresh tokens rotate, so a second refresh with the old one would fail. */
  let refreshing: Promise<Tokens | undefined> | undefined;
  /** A copy of each request that may be retried (the original's body is read when it is sent). */
  const copies = new Map<string, Request>();

  const setTokens = (next: Tokens | undefined) => {
    tokens = next;
    options.onTokens?.(next);
  };

  async function refresh(rejected: string): Promise<Tokens | undefined> {
    // Another request already refreshed since this one was sent: use its tokens.
    if (tokens && tokens.accessToken !== rejected) return tokens;
    if (!tokens) return undefined;
    const { refreshToken } = tokens;
    refreshing ??= client
      .POST("/api/v1/auth/refresh-token", { body: { refreshToken } })
      .then(({ data }) => {
        setTokens(data && { accessToken: data.accessToken, refreshToken: data.refreshToken });
        return tokens;
      })
      .finally(() => {
        refreshing = undefined;
      });
    return refreshing;
  }

  const auth: Middleware = {
    onRequest({ request, schemaPath, id }) {
      if (schoolId !== undefined && !request.headers.has("x-school-id")) {
        request.headers.set("x-school-id", String(schoolId));
      }
      if (!tokens || isAuthPath(schemaPath) || request.headers.has("authorization")) return request;
      request.headers.set("authorization", `Bearer ${tokens.accessToken}`);
      copies.set(id, request.clone());
      return request;
    },
    async onResponse({ request, response, id, options: { fetch } }) {
      const copy = copies.get(id);
      copies.delete(id);
      if (response.status !== 401 || !copy) return response;
      const sent = request.headers.get("authorization")?.replace(/^Bearer /, "") ?? "";
      const fresh = await refresh(sent);
      if (!fresh) return response;
      copy.headers.set("authorization", `Bearer ${fresh.accessToken}`);
      return fetch(copy);
    },
    onError({ id }) {
      copies.delete(id);
    },
  };
  /**
   * Read-your-writes across requests: each request starts its database session where the latest
   * answer left it. Answers may arrive out of order; a bookmark is kept only when it is newer
   * (bookmarks are fixed-width hex, ordered as strings).
   */
  const bookmarks: Middleware = {
    onRequest({ request }) {
      if (bookmark && !request.headers.has(BOOKMARK)) request.headers.set(BOOKMARK, bookmark);
      return request;
    },
    onResponse({ response }) {
      const answered = response.headers.get(BOOKMARK);
      if (answered && (!bookmark || answered > bookmark)) {
        bookmark = answered;
        options.onBookmark?.(answered);
      }
      return response;
    },
  };
  // First: a request retried after a refresh (auth's copy) carries the bookmark, and its answer's is kept.
  client.use(bookmarks, auth);

  return {
    ...client,
    get tokens() {
      return tokens;
    },
    setTokens,
    setSchool(next: number | undefined) {
      schoolId = next;
    },
    get bookmark() {
      return bookmark;
    },
  };
}
