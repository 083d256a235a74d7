/**
 * The final lists as PDFs: they load (pdf-lib parses them back), have the pages expected, and their
 * text (read from the inflated content streams) names every rider, accents included; the school's
 * logo is embedded (a JPEG as it is; a PNG with its predictors, or split into colour and a soft
 * mask when it has alpha); a holiday prints a page that says so.
 */

import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { unzlibSync, zlibSync } from "fflate";
import { PDFDocument, PDFRawStream } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { schools } from "../src/db/schema/core";
import { fitText, PdfDocument, readImage, readJpeg, readPng, textWidth } from "../src/lib/pdf";
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

/** A PNG file: the chunks around `rows` (each row's filter byte first, as PNG stores them). */
function png(width: number, height: number, type: number, rows: number[][], extra: [string, number[]][] = []) {
  const chunk = (name: string, body: Uint8Array) => {
    const out = new Uint8Array(12 + body.length);
    const view = new DataView(out.buffer);
    view.setUint32(0, body.length);
    out.set(
      [...name].map((c) => c.charCodeAt(0)),
      4,
    );
    out.set(body, 8);
    view.setUint32(8 + body.length, crc32(out.subarray(4, 8 + body.length)));
    return out;
  };
  const ihdr = new Uint8Array(13);
  new DataView(ihdr.buffer).setUint32(0, width);
  new DataView(ihdr.buffer).setUint32(4, height);
  ihdr.set([8, type, 0, 0, 0], 8);
  const parts = [
    new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    ...extra.map(([name, body]) => chunk(name, new Uint8Array(body))),
    chunk("IDAT", zlibSync(new Uint8Array(rows.flat()))),
    chunk("IEND", new Uint8Array()),
  ];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

function crc32(bytes: Uint8Array) {
  let c = 0xffffffff;
  for (const b of bytes) {
    c ^= b;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  }
  return (c ^ 0xffffffff) >>> 0;
}

describe("the PDF writer", () => {
  it("measures and fits text, reads a JPEG's size, writes a loadable file", async () => {
    expect(textWidth("Hola", 10)).toBeCloseTo((722 + 556 + 222 + 556) / 100, 5);
    expect(textWidth("Íñigo", 10)).toBe(textWidth("Inigo", 10));
    expect(fitText("Una parada con un nombre muy largo", 60, 9)).toMatch(/…$/);
    expect(readJpeg(JPEG)).toMatchObject({ width: 8, height: 4, dict: expect.stringContaining("/DeviceRGB") });
    expect(readJpeg(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toBeUndefined();
    const doc = new PdfDocument();
    doc.addPage().text(40, 800, "¿Dónde está Ñandú? ¡Aquí! (ü)", { font: "bold" }).line(40, 790, 200, 790);
    doc.addPage().text(40, 800, "Página 2");
    const parsed = await pdfText(doc.toBytes());
    expect(parsed.pages).toBe(2);
    expect(parsed.text).toContain("¿Dónde está Ñandú? ¡Aquí! (ü)");
  });
});

describe("PNG images", () => {
  // RGBA pixels, 2 x 2: red opaque, green half, blue clear, white opaque.
  const PIXELS = [
    [255, 0, 0, 255, 0, 255, 0, 128],
    [0, 0, 255, 0, 255, 255, 255, 255],
  ];

  it("undoes every row filter and splits colour from alpha when the PNG has an alpha channel", () => {
    const [top = [], bottom = []] = PIXELS;
    // Row 1 filtered with Sub (each byte minus the one a pixel to its left), row 2 with Paeth.
    const sub = top.map((v, x) => (v - (x >= 4 ? (top[x - 4] ?? 0) : 0)) & 0xff);
    const paeth = (a: number, b: number, c: number) => {
      const p = a + b - c;
      const [pa, pb, pc] = [Math.abs(p - a), Math.abs(p - b), Math.abs(p - c)];
      return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
    };
    const withPaeth = bottom.map((v, x) => {
      const left = x >= 4 ? (bottom[x - 4] ?? 0) : 0;
      const upLeft = x >= 4 ? (top[x - 4] ?? 0) : 0;
      return (v - paeth(left, top[x] ?? 0, upLeft)) & 0xff;
    });
    const image = readPng(
      png(2, 2, 6, [
        [1, ...sub],
        [4, ...withPaeth],
      ]),
    );
    expect(image).toMatchObject({ width: 2, height: 2, dict: expect.stringContaining("/DeviceRGB") });
    expect([...unzlibSync(image?.stream ?? new Uint8Array())]).toEqual([
      255, 0, 0, 0, 255, 0, 0, 0, 255, 255, 255, 255,
    ]);
    expect([...unzlibSync(image?.alpha ?? new Uint8Array())]).toEqual([255, 128, 0, 255]);

    // Up and Average, on gray + alpha.
    const ga = [
      [10, 255, 20, 0],
      [30, 128, 40, 64],
    ];
    const [g0 = [], g1 = []] = ga;
    const up = g1.map((v, x) => (v - (g0[x] ?? 0)) & 0xff);
    const image2 = readPng(
      png(2, 2, 4, [
        [0, ...g0],
        [2, ...up],
      ]),
    );
    expect([...unzlibSync(image2?.stream ?? new Uint8Array())]).toEqual([10, 20, 30, 40]);
    expect([...unzlibSync(image2?.alpha ?? new Uint8Array())]).toEqual([255, 0, 128, 64]);
    const avg = g1.map((v, x) => (v - (((x >= 2 ? (g1[x - 2] ?? 0) : 0) + (g0[x] ?? 0)) >> 1)) & 0xff);
    expect([
      ...unzlibSync(
        readPng(
          png(2, 2, 4, [
            [0, ...g0],
            [3, ...avg],
          ]),
        )?.alpha ?? new Uint8Array(),
      ),
    ]).toEqual([255, 0, 128, 64]);
  });

  it("embeds a PNG without alpha as it is, with its predictors; a palette as an indexed colour space", () => {
    const rgb = png(1, 1, 2, [[0, 1, 2, 3]]);
    const image = readPng(rgb);
    expect(image?.dict).toContain("/Predictor 15 /Colors 3 /BitsPerComponent 8 /Columns 1");
    expect(image?.alpha).toBeUndefined();
    expect([...unzlibSync(image?.stream ?? new Uint8Array())]).toEqual([0, 1, 2, 3]);
    const indexed = readPng(png(1, 1, 3, [[0, 1]], [["PLTE", [0, 0, 0, 255, 128, 0]]]));
    expect(indexed?.dict).toContain("/ColorSpace [/Indexed /DeviceRGB 1 <000000ff8000>]");
    // What it does not read is left out: not a PNG, a palette PNG without a palette, an unknown filter.
    expect(readImage(new Uint8Array([1, 2, 3]))).toBeUndefined();
    expect(readPng(png(1, 1, 3, [[0, 1]]))).toBeUndefined();
    expect(readPng(png(1, 1, 6, [[7, 1, 2, 3, 4]]))).toBeUndefined();
  });

  it("a PNG logo with alpha is drawn with a soft mask in the route list", async () => {
    await env.DOCUMENTS.put(
      "2/logo/logo.png",
      png(
        2,
        2,
        6,
        PIXELS.map((r) => [0, ...r]),
      ),
    );
    await t.db.update(schools).set({ logo: "2/logo/logo.png" }).where(eq(schools.id, SOUTH));
    try {
      const res = await t.request(`${S}/final-status/pdf?date=${MONDAY}`, { token: await admin(), school: SOUTH });
      expect(res.status).toBe(200);
      const bytes = new Uint8Array(await res.arrayBuffer());
      const text = new TextDecoder("latin1").decode(bytes);
      expect(text).toContain("/SMask 7 0 R");
      expect(text).toContain("/XObject << /Im1 6 0 R >>");
      expect((await PDFDocument.load(bytes)).getPageCount()).toBeGreaterThanOrEqual(1);
    } finally {
      await t.db.update(schools).set({ logo: null }).where(eq(schools.id, SOUTH));
    }
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
    expect(parsed.text).toContain("2027-03-06 is not a school day: no route runs");
  });
});
