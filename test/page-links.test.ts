/**
 * A page's `next` and `previous` links: the request's path and query with `page` and `pageSize` set
 * as `URLSearchParams.set` sets them, the other parameters kept as the client wrote them.
 */
import { describe, expect, it } from "vitest";
import { pageLink } from "../src/lib/pagination";

/** The link as `URL` and `URLSearchParams` build it. */
function reference(url: string, page: number, pageSize: number) {
  const u = new URL(url);
  u.searchParams.set("page", String(page));
  u.searchParams.set("pageSize", String(pageSize));
  return `${u.pathname}?${u.searchParams.toString()}`;
}

const entries = (link: string) => [...new URLSearchParams(link.slice(link.indexOf("?") + 1))];

describe("page links", () => {
  const base = "https://api.example.com:8443";
  const plain = [
    "/api/v1/permission",
    "/api/v1/permission?",
    "/api/v1/permission?pageSize=5",
    "/api/v1/permission?page=1&pageSize=5",
    "/api/v1/permission?name=read&pageSize=2",
    "/api/v1/student?group=6006&level=elementary&pageSize=20&page=3",
    "/api/v1/student?page=1&page=7&pageSize=5&pageSize=9&sort=-createdAt",
    "/api/v1/student?&&page=2&",
  ];
  for (const path of plain) {
    it(`${path}: as URLSearchParams writes it`, () => {
      expect(pageLink(`${base}${path}`, 4, 5)).toBe(reference(`${base}${path}`, 4, 5));
    });
  }

  it("keeps other parameters as written, with the same values as URLSearchParams reads", () => {
    for (const path of [
      "/api/v1/student?search=Jos%C3%A9%20Mar%C3%ADa&page=2",
      "/api/v1/student?search=a+b&pag%65=9&pageSize=3",
      "/api/v1/student?search=%E2%82%AC%2B%26&page=x",
      "/api/v1/student?bad=%E0%A4%A&page=2",
      "/api/v1/student?sort=-createdAt,name&flag&page=2",
    ]) {
      const mine = pageLink(`${base}${path}`, 4, 5);
      expect(mine.startsWith("/api/v1/student?")).toBe(true);
      expect(entries(mine)).toEqual(entries(reference(`${base}${path}`, 4, 5)));
    }
    expect(pageLink(`${base}/api/v1/student?search=Jos%C3%A9&sort=-createdAt,name&page=2`, 3, 20)).toBe(
      "/api/v1/student?search=Jos%C3%A9&sort=-createdAt,name&page=3&pageSize=20",
    );
  });
});
