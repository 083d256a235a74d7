/**
 * Where a webhook may point. In production (and staging) only `https` URLs to public addresses:
 * no loopback, private, link-local, shared or metadata addresses, no `localhost` or internal names,
 * no credentials in the URL. Redirects are never followed (a 3xx is a failed attempt), so a public
 * URL cannot bounce a delivery to an internal one. Development may use http and localhost (a
 * receiver on the developer's machine). A host name that resolves to a private address is left to
 * the platform: a Worker's `fetch` reaches no private network of ours.
 */

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
  if (v4) return privateV4(v4) ? "a private, loopback or link-local address" : undefined;
  if (host.includes(":")) return privateV6(host) ? "a private, loopback or link-local address" : undefined;
  if (!host.includes(".") || INTERNAL_NAMES.test(host.replace(/\.$/, ""))) return "an internal host name";
  if (/^metadata(\.|$)/i.test(host)) return "a metadata address";
  return undefined;
}
