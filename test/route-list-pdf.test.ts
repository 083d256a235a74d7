/**
 * The final lists as PDFs: they load (pdf-lib parses them back), have the pages expected, and their
 * text (read from the inflated content streams) names every rider, accents included; the school's
 * JPEG logo is embedded; a holiday prints a page that says so.
 */

import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { unzlibSync } from "fflate";
import { PDFDocument, PDFRawStream } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { schools } from "../src/db/schema/core";
import { fitText, PdfDocument, readJpeg, textWidth } from "../src/lib/pdf";
import { MONDAY, makeRoute } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp } from "./helpers";

const SOUTH = 2;
const S = "/api/v1/route-availability-student";
const t = makeTestApp();
const admin = () => t.token(DEMO.southAdmin.id, { [SOUTH]: "all" });

/** The text a PDF shows: every `(...) Tj` string of its inflated content streams, WinAnsi read as Latin-1. */
async function pdfText(bytes: Uint8Array) {
  const doc = await PDFDocument.load(bytes);
  const parts: string[] = [];
  for (const [, object] of doc.context.enumerateIndirectObjects()) {
    if (!(object instanceof PDFRawStream)) continue;
    if (!object.dict.toString().includes("/FlateDecode")) continue;
    const content = new TextDecoder("latin1").decode(unzlibSync(object.contents));
    for (const m of content.matchAll(/\(((?:\\.|[^\\)])*)\) Tj/g)) parts.push((m[1] ?? "").replace(/\\(.)/g, "$1"));
  }
  return { pages: doc.getPageCount(), text: parts.join("\n") };
}

/** A minimal JPEG header: what the writer reads (size, components); viewers decode the rest. */
const JPEG = new Uint8Array([
  0xff, 0xd8, 0xff, 0xc0, 0x00, 0x11, 0x08, 0x00, 0x04, 0x00, 0x08, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03,
  0x11, 0x01, 0xff, 0xd9,
]);

describe("the PDF writer", () => {
  it("measures and fits text, reads a JPEG's size, writes a loadable file", async () => {
    expect(textWidth("Hola", 10)).toBeCloseTo((722 + 556 + 222 + 556) / 100, 5);
    expect(textWidth("Íñigo", 10)).toBe(textWidth("Inigo", 10));
    expect(fitText("Una parada con un nombre muy largo", 60, 9)).toMatch(/…$/);
    expect(readJpeg(JPEG)).toMatchObject({ width: 8, height: 4, components: 3 });
    expect(readJpeg(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toBeUndefined();
    const doc = new PdfDocument();
    doc.addPage().text(40, 800, "¿Dónde está Ñandú? ¡Aquí! (ü)", { font: "bold" }).line(40, 790, 200, 790);
    doc.addPage().text(40, 800, "Página 2");
    const parsed = await pdfText(doc.toBytes());
    expect(parsed.pages).toBe(2);
    expect(parsed.text).toContain("¿Dónde está Ñandú? ¡Aquí! (ü)");
  });
});

describe("route list PDFs", () => {
  it("one route and every route: each rider named, the logo embedded, the list marked printed", async () => {
    const names: [string, string][] = Array.from({ length: 70 }, (_, i) => [`Niña${i}`, i % 2 ? "Muñoz" : "Gómez"]);
    const big = await makeRoute(t, SOUTH, { seats: 80, riders: names, name: "Ruta Águila" });
    const small = await makeRoute(t, SOUTH, { riders: [["José", "Peña"]], name: "Ruta Búho" });
    await env.DOCUMENTS.put("2/logo/logo.jpg", JPEG);
    await t.db.update(schools).set({ logo: "2/logo/logo.jpg" }).where(eq(schools.id, SOUTH));
    try {
      const res = await t.request(`${S}/route/${big.routeId}/final-status/pdf?date=${MONDAY}`, {
        token: await admin(),
        school: SOUTH,
      });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/pdf");
      expect(res.headers.get("content-disposition")).toContain(`route-${big.routeId}-${MONDAY}.pdf`);
      const bytes = new Uint8Array(await res.arrayBuffer());
      expect(new TextDecoder("latin1").decode(bytes)).toContain("/DCTDecode");
      const one = await pdfText(bytes);
      expect(one.pages).toBe(2); // 70 rows do not fit one A4 page
      for (const [first, last] of names) expect(one.text).toContain(`${last}, ${first}`);
      expect(one.text).toContain("Ruta Águila");
      expect(one.text).toContain("Monday, 1 March 2027");

      const status = await t.request(`${S}/route/${big.routeId}/final-status?date=${MONDAY}`, {
        token: await admin(),
        school: SOUTH,
      });
      expect(await status.json()).toMatchObject({ version: 1, printedVersion: 1 });

      const all = await t.request(`${S}/final-status/pdf?date=${MONDAY}`, { token: await admin(), school: SOUTH });
      expect(all.status).toBe(200);
      const every = await pdfText(new Uint8Array(await all.arrayBuffer()));
      expect(every.text).toContain("Peña, José");
      expect(every.text).toContain("Ruta Búho");
      expect(every.pages).toBeGreaterThanOrEqual(3);
      expect(small.routeId).toBeGreaterThan(0);
    } finally {
      await t.db.update(schools).set({ logo: null }).where(eq(schools.id, SOUTH));
    }
  });

  it("a weekend prints one page that says no route runs", async () => {
    const res = await t.request(`${S}/final-status/pdf?date=2027-03-06`, { token: await admin(), school: SOUTH });
    expect(res.status).toBe(200);
    const parsed = await pdfText(new Uint8Array(await res.arrayBuffer()));
    expect(parsed.pages).toBe(1);
    expect(parsed.text).toContain("No route runs on 2027-03-06");
  });
});
