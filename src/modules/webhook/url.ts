/**
 * Where a webhook may point. In production (and staging) only `https` URLs to public addresses:
 * no loopback, private, link-local, shared or metadata addresses, no `localhost` or internal names,
 * no credentials in the URL. Redirects are never followed (a 3xx is a failed attempt), so a public
 * URL cannot bounce a delivery to an internal one. Development may use http and localhost (a
 * receiver on the developer's machine). A host name is resolved (DNS over HTTPS, `Deps.resolver`)
 * and refused when any of its A or AAAA addresses is one of those, or when it resolves to nothing:
 * when the endpoint is saved and again before each attempt, since DNS can change between them.
 */
import type { Resolver } from "../../lib/dns";

function ipv4(host: string): number[] | undefined {
  const parts = host.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
  const n = parts.map(Number);
  return n.every((x) => x <= 255) ? n : undefined;
}

function privateV4([a = 0, b = 0]: number[]): boolean {
  return (
    a === 0 ||
    a === 10 ||
    a === 127 ||
    (a === 100 && b >= 64 && b <= 127) ||
    (a === 169 && b === 254) ||
    (a === 172 && b >= 16 && b <= 31) ||
    (a === 192 && b === 168) ||
    (a === 198 && (b === 18 || b === 19)) ||
    a >= 224
  );
}

function privateV6(host: string): boolean {
  const h = host.toLowerCase();
  if (h === "::" || h === "::1") return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(h);
  if (mapped) return privateV4(ipv4(mapped[1] ?? "") ?? [0]);
  // fc00::/7 unique local, fe80::/10 link-local, ff00::/8 multicast; any other embedded form refused too.
  return /^(f[cd]|fe[89ab]|ff)/.test(h) || h.includes("::ffff:") || h.startsWith("64:ff9b:");
}

const INTERNAL_NAMES = /(^|\.)(localhost|local|internal|intranet|lan|home|corp|localdomain)$/i;

/** Why `url` may not receive webhooks here, or undefined when it may. */
export function refusedUrl(raw: string, development: boolean): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return "not a URL";
  }
  if (url.username || url.password) return "credentials in the URL";
  if (development && (url.protocol === "http:" || url.protocol === "https:")) return undefined;
  if (url.protocol !== "https:") return "not https";
  const host = url.hostname.replace(/^\[|\]$/g, "");
  const v4 = ipv4(host);
  if (v4) return privateV4(v4) ? PRIVATE : undefined;
  if (host.includes(":")) return privateV6(host) ? PRIVATE : undefined;
  if (!host.includes(".") || INTERNAL_NAMES.test(host.replace(/\.$/, ""))) return "an internal host name";
  if (/^metadata(\.|$)/i.test(host)) return "a metadata address";
  return undefined;
}

const PRIVATE = "a private, loopback or link-local address";

/** Whether an address literal (IPv4 or IPv6) is not a public one. */
export function privateAddress(address: string): boolean {
  const host = address.replace(/^\[|\]$/g, "");
  const v4 = ipv4(host);
  if (v4) return privateV4(v4);
  return host.includes(":") ? privateV6(host) : true;
}

/**
 * Why `url` may not receive webhooks here, or undefined when it may: `refusedUrl`, then (outside
 * development) the addresses its host name resolves to, every one of which must be public.
 */
export async function refusedDestination(
  raw: string,
  development: boolean,
  resolver: Resolver,
): Promise<string | undefined> {
  const refused = refusedUrl(raw, development);
  if (refused || development) return refused;
  const host = new URL(raw).hostname.replace(/^\[|\]$/g, "");
  if (ipv4(host) || host.includes(":")) return undefined;
  let addresses: string[];
  try {
    addresses = await resolver.resolve(host);
  } catch {
    return "its host name could not be resolved";
  }
  if (addresses.length === 0) return "its host name does not resolve";
  return addresses.some(privateAddress) ? `its host name resolves to ${PRIVATE}` : undefined;
}
