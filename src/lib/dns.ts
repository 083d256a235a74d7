/**
 * Resolving host names from a Worker: DNS over HTTPS with the JSON API (RFC 8484's sibling, as
 * Cloudflare and Google serve it: `GET <endpoint>?name=<host>&type=A|AAAA` with
 * `accept: application/dns-json`, answering `{ Status, Answer: [{ name, type, TTL, data }] }`).
 * A Worker has no resolver of its own to ask; the webhook module checks where a host name points
 * before it posts there (src/modules/webhook/url.ts). A dependency (`Deps.resolver`) so tests resolve
 * against a DoH server of their own on loopback.
 */
import { z } from "@hono/zod-openapi";

/** Looks up a host name's addresses. */
export interface Resolver {
  /** The name's IPv4 and IPv6 addresses (CNAMEs followed by the resolver); throws when it cannot tell. */
  resolve(name: string): Promise<string[]>;
}

/** Cloudflare's public DoH endpoint (the JSON API). */
export const CLOUDFLARE_DOH = "https://cloudflare-dns.com/dns-query";

/** DNS record types the JSON API names by number. */
const TYPES = { A: 1, AAAA: 28 } as const;

/** The DNS response codes the answer's `Status` carries: 0 NOERROR, 3 NXDOMAIN. */
const NXDOMAIN = 3;

/** What the JSON API answers, checked: a resolver's answer is outside data like any other. */
const DohAnswer = z.object({
  Status: z.number().int(),
  Answer: z.array(z.object({ name: z.string().optional(), type: z.number().int(), data: z.string() })).optional(),
});

/** Resolves with DNS-over-HTTPS at `endpoint` (the JSON API), A and AAAA at once. */
export function dohResolver(endpoint = CLOUDFLARE_DOH, options: { timeoutMs?: number } = {}): Resolver {
  const timeoutMs = options.timeoutMs ?? 3000;
  async function query(name: string, type: keyof typeof TYPES): Promise<string[]> {
    const url = new URL(endpoint);
    url.searchParams.set("name", name);
    url.searchParams.set("type", type);
    const res = await fetch(url, {
      headers: { accept: "application/dns-json" },
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) {
      await res.body?.cancel();
      throw new Error(`DNS over HTTPS answered ${res.status}`);
    }
    const parsed = DohAnswer.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success) throw new Error("DNS over HTTPS answered something other than the JSON API");
    const answer = parsed.data;
    if (answer.Status === NXDOMAIN) return [];
    if (answer.Status !== 0) throw new Error(`DNS answered status ${answer.Status}`);
    return (answer.Answer ?? []).filter((a) => a.type === TYPES[type]).map((a) => a.data);
  }
  return {
    async resolve(name: string) {
      const [v4, v6] = await Promise.all([query(name, "A"), query(name, "AAAA")]);
      return [...v4, ...v6];
    },
  };
}
