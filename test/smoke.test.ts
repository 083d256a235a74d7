import { env } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSchoolClient, type Tokens } from "../client";
import { DEMO, makeTestApp, problem } from "./helpers";

describe("smoke", () => {
  it("signs in and lists permissions", async () => {
    const t = makeTestApp();
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    const res = await t.request("/api/v1/permission", { token: accessToken });
    expect(res.status).toBe(200);
    const page = (await res.json()) as { total: number };
    expect(page.total).toBeGreaterThan(10);
    const bad = await t.request("/api/v1/permission/abc", { token: accessToken });
    expect(bad.status).toBe(400);
    expect((await problem(bad)).errors?.[0]?.path).toBe("id");
  });
});

/**
 * The typed client of client/ (what the mobile app uses), against the real app: if the generated
 * types or the client drift from the API, this fails to compile or to pass.
 */
describe("typed client", () => {
  // One app for these tests; an hour after the test above, so its sign-in's cooldown is over.
  const t = makeTestApp();
  t.clock.advance(60 * 60);

  /** A client whose fetch is the app itself; `saved` records what `onTokens` was told. */
  function clientFor(options: { tokens?: Tokens; schoolId?: number } = {}) {
    const saved: (Tokens | undefined)[] = [];
    const api = createSchoolClient({
      baseUrl: "http://localhost",
      fetch: (request) => Promise.resolve(t.app.request(request, undefined, env)),
      onTokens: (tokens) => saved.push(tokens),
      ...options,
    });
    return { api, saved };
  }

  /** The sign-in a mobile app does: send a code, read it (dev outbox), verify it. */
  async function signIn(phone: string) {
    const { api, saved } = clientFor();
    const sent = await api.POST("/api/v1/auth/send-verification-code", { body: { phone } });
    expect(sent.response.status).toBe(202);
    const outbox = await api.GET("/api/v1/dev/outbox", { params: { query: { to: phone } } });
    const code = /\b(\d{6})\b/.exec(outbox.data?.data[0]?.body ?? "")?.[1] ?? "";
    const { data: session, error } = await api.POST("/api/v1/auth/verify-code", { body: { phone, code } });
    expect(error).toBeUndefined();
    if (!session) throw new Error("no session");
    expect(session.tokenType).toBe("Bearer");
    api.setTokens(session);
    t.clock.advance(61); // past the resend cooldown
    return { api, saved, session };
  }

  it("signs in, sends the bearer token, and types answers and problems", async () => {
    const { api, session } = await signIn(DEMO.northAdmin.phone);
    const me = await api.GET("/api/v1/user/me");
    expect(me.response.status).toBe(200);
    expect(me.data?.id).toBe(DEMO.northAdmin.id);
    expect(session.user.id).toBe(DEMO.northAdmin.id);

    const page = await api.GET("/api/v1/permission", { params: { query: { pageSize: 5 } } });
    expect(page.data?.data).toHaveLength(5);
    expect(page.data?.total).toBeGreaterThan(10);
    // `sort` is typed as the list's own keys (another list's key would not compile) and sent comma-separated.
    const sorted = await api.GET("/api/v1/permission", { params: { query: { sort: ["-name", "id"], pageSize: 100 } } });
    expect(sorted.response.status).toBe(200);
    const names = sorted.data?.data.map((p) => p.name) ?? [];
    expect(names).toEqual([...names].sort().reverse());

    const missing = await api.GET("/api/v1/permission/{id}", { params: { path: { id: 999_999 } } });
    expect(missing.response.status).toBe(404);
    expect(missing.error?.type).toBe("/problems/not-found");
    expect(missing.error?.status).toBe(404);
  });

  it("sends X-School-Id", async () => {
    const { api } = await signIn(DEMO.superAdmin.phone);
    // A super-admin belongs to no school: school data needs the header.
    const without = await api.GET("/api/v1/documents");
    expect(without.response.status).toBe(400);
    expect(without.error?.errors?.[0]?.path).toBe("X-School-Id");
    api.setSchool(DEMO.northAdmin.school);
    const north = await api.GET("/api/v1/documents");
    expect(north.response.status).toBe(200);

    const admin = await signIn(DEMO.northAdmin.phone);
    admin.api.setSchool(DEMO.southAdmin.school);
    const south = await admin.api.GET("/api/v1/documents");
    expect(south.response.status).toBe(403);
    expect(south.error?.detail).toBe(`You have no role in school ${DEMO.southAdmin.school}`);
  });

  it("refreshes an expired access token once, retries, and keeps the rotated tokens", async () => {
    const { api, saved, session } = await signIn(DEMO.northAdmin.phone);
    t.clock.advance(11 * 60); // access tokens last 10 minutes
    // Two requests at once, one with a body: one refresh serves both, and both are retried.
    const [me, created] = await Promise.all([
      api.GET("/api/v1/user/me"),
      api.POST("/api/v1/documents", {
        body: { name: "client.pdf", slug: `${DEMO.northAdmin.school}/documents/client.pdf` },
      }),
    ]);
    expect(me.response.status).toBe(200);
    expect(created.response.status).toBe(201);
    expect(created.data?.slug).toBe(`${DEMO.northAdmin.school}/documents/client.pdf`);
    expect(saved).toHaveLength(2); // the sign-in, then one refresh
    expect(api.tokens?.refreshToken).not.toBe(session.refreshToken);
    expect(api.tokens?.accessToken).not.toBe(session.accessToken);

    // The old refresh token was rotated away: a client still holding it is signed out.
    const stale = clientFor({ tokens: { accessToken: session.accessToken, refreshToken: session.refreshToken } });
    const refused = await stale.api.GET("/api/v1/user/me");
    expect(refused.response.status).toBe(401);
    expect(refused.error?.type).toBe("/problems/unauthorized");
    expect(stale.saved).toEqual([undefined]);
    expect(stale.api.tokens).toBeUndefined();
  });

  it("carries the D1 bookmark: each request sends the latest answer's, and the app is told to keep it", async () => {
    const { session } = await signIn(DEMO.northAdmin.phone);
    const sent: (string | null)[] = [];
    const kept: string[] = [];
    const api = createSchoolClient({
      baseUrl: "http://localhost",
      tokens: session,
      schoolId: 1,
      fetch: (request) => {
        sent.push(request.headers.get("x-d1-bookmark"));
        return Promise.resolve(t.app.request(request, undefined, env));
      },
      onBookmark: (bookmark) => kept.push(bookmark),
    });
    const created = await api.POST("/api/v1/documents", {
      body: { name: "Client", slug: `1/documents/${crypto.randomUUID()}.pdf` },
    });
    expect(created.response.status).toBe(201);
    const written = created.response.headers.get("x-d1-bookmark");
    expect(written).toMatch(/^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/);
    expect(api.bookmark).toBe(written);
    const read = await api.GET("/api/v1/documents/{id}", { params: { path: { id: created.data?.id ?? 0 } } });
    expect(read.response.status).toBe(200);
    expect(sent).toEqual([null, written]);
    expect(kept).toEqual([written, api.bookmark]);
    // A kept bookmark (an app restarted) is sent with the first request.
    const restarted = createSchoolClient({
      baseUrl: "http://localhost",
      tokens: session,
      schoolId: 1,
      bookmark: api.bookmark,
      fetch: (request) => {
        sent.push(request.headers.get("x-d1-bookmark"));
        return Promise.resolve(t.app.request(request, undefined, env));
      },
    });
    await restarted.GET("/api/v1/user/me");
    expect(sent.at(-1)).toBe(api.bookmark);
  });
});
