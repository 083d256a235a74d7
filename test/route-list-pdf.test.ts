/**
 * The final lists as PDFs: they load (pdf-lib parses them back), have the pages expected, and their
 * text, read back through each font's ToUnicode map as a PDF reader extracts it, names every rider
 * and everyone who may receive them whole (cells wrap; none is cut), in any script a school's names
 * are written in: Spanish accents, Vietnamese, Arabic (shaped, right to left), Chinese, with no
 * missing glyph drawn. Fallback fonts are embedded only when a name needs them. The school's logo is
 * embedded (a JPEG as it is; a PNG with its predictors, or split into colour and a soft mask when it
 * has alpha); a holiday prints a page that says so.
 */

import { env } from "cloudflare:test";
import { eq } from "drizzle-orm";
import { unzlibSync, zlibSync } from "fflate";
import { decodePDFRawStream, PDFArray, PDFDict, PDFDocument, PDFName, PDFRawStream, PDFRef, PDFStream } from "pdf-lib";
import { describe, expect, it } from "vitest";
import { schools } from "../src/db/schema/core";
import { trustedPeople } from "../src/db/schema/trusted-person";
import { FAMILIES, FONT_PATH, PdfDocument } from "../src/lib/pdf";
import { readImage, readJpeg, readPng } from "../src/lib/pdf-image";
import { MONDAY, makeRoute } from "./fixtures/modules/route-availability";
import { DEMO, makeTestApp, type TestApp } from "./helpers";

const SOUTH = 2;
const S = "/api/v1/route-availability-student";
const t = makeTestApp();
const admin = () => t.token(DEMO.southAdmin.id, { [SOUTH]: "all" });

const RTL = /[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]/u;

/** A font's ToUnicode map (glyph code -> text), or undefined for a simple font (one byte a character). */
function toUnicode(font: PDFDict): Map<number, string> | undefined {
  const stream = font.lookup(PDFName.of("ToUnicode"));
  if (!(stream instanceof PDFRawStream)) return undefined;
  const cmap = new TextDecoder().decode(decodePDFRawStream(stream).decode());
  const map = new Map<number, string>();
  for (const block of cmap.matchAll(/beginbfchar([\s\S]*?)endbfchar/g)) {
    for (const [, code = "", text = ""] of (block[1] ?? "").matchAll(/<([0-9a-fA-F]+)>\s*<([0-9a-fA-F]*)>/g)) {
      const units = text.match(/.{4}/g)?.map((u) => Number.parseInt(u, 16)) ?? [];
      map.set(Number.parseInt(code, 16), String.fromCharCode(...units));
    }
  }
  return map;
}

/** Bytes as a string of chars 0-255 (TextDecoder's "latin1" is windows-1252). */
const binary = (bytes: Uint8Array) => Array.from(bytes, (b) => String.fromCharCode(b)).join("");

/** A literal string's escape, undone. */
const unescaped = (_: string, c: string) =>
  ({ n: "\n", r: "\r", t: "\t", b: "\b", f: "\f" })[c] ??
  (/^[0-7]+$/.test(c) ? String.fromCharCode(Number.parseInt(c, 8)) : c);

/** One string a page shows: where, in which font, and its text in reading order. */
interface Shown {
  page: number;
  x: number;
  y: number;
  font: string;
  text: string;
  /** Its glyphs: code and text of each, in drawing order. */
  glyphs: { code: number; text: string }[];
}

/**
 * The text a PDF shows, as a reader extracts it: each `Tj` decoded through its font's ToUnicode map
 * (glyph 0, the missing-glyph box, as U+FFFD), a right-to-left run put back in reading order.
 * `text`: the strings of a line (same page and baseline) joined in x order, lines top to bottom.
 * `flow`: the strings in the order they are drawn, joined where they share a baseline and with a
 * space where the baseline changes, so a cell that wraps reads as one text.
 */
async function pdfText(bytes: Uint8Array) {
  const doc = await PDFDocument.load(bytes);
  const shown: Shown[] = [];
  doc.getPages().forEach((page, index) => {
    const fonts = new Map<string, { name: string; map: Map<number, string> | undefined }>();
    const resources = page.node.Resources()?.lookup(PDFName.of("Font"), PDFDict);
    for (const [key, ref] of resources?.entries() ?? []) {
      const font = doc.context.lookup(ref, PDFDict);
      fonts.set(key.asString(), { name: font.get(PDFName.of("BaseFont"))?.toString() ?? "", map: toUnicode(font) });
    }
    const contents = page.node.Contents();
    const streams = contents instanceof PDFArray ? contents.asArray() : contents ? [contents] : [];
    const content = streams
      .map((s) => (s instanceof PDFRef ? doc.context.lookup(s) : s))
      .map((s) => binary(decodePDFRawStream(s as PDFRawStream).decode()))
      .join("\n");
    const tokens = content.match(/\/[^\s/[\]()<>]+|<[0-9a-fA-F]*>|\((?:\\.|[^\\)])*\)|-?[\d.]+|[A-Za-z*'"]+/g) ?? [];
    let font = "";
    let x = 0;
    let y = 0;
    const operands: string[] = [];
    for (const token of tokens) {
      if (!/^[A-Za-z*'"]+$/.test(token)) {
        operands.push(token);
        continue;
      }
      if (token === "Tf") font = operands.at(-2) ?? "";
      if (token === "Td" || token === "Tm") [x, y] = operands.slice(-2).map(Number) as [number, number];
      if (token === "Tj") {
        const operand = operands.at(-1) ?? "";
        const { name = "", map } = fonts.get(font) ?? {};
        // A string's bytes: a hex string's, or a literal's with its escapes undone.
        const bytes = operand.startsWith("<")
          ? (operand.slice(1, -1).match(/../g) ?? []).map((b) => Number.parseInt(b, 16))
          : [...operand.slice(1, -1).replace(/\\([nrtbf()\\]|[0-7]{1,3})/g, unescaped)].map((ch) => ch.charCodeAt(0));
        // A font with a ToUnicode map (the embedded ones) has two-byte codes; a simple font one byte a character.
        const glyphs = map
          ? bytes
              .flatMap((b, i) => (i % 2 ? [] : [(b << 8) | (bytes[i + 1] ?? 0)]))
              .map((code) => ({ code, text: code === 0 ? "\ufffd" : (map.get(code) ?? "\ufffd") }))
          : bytes.map((code) => ({ code, text: String.fromCharCode(code) }));
        const order = glyphs.some((g) => RTL.test(g.text)) ? [...glyphs].reverse() : glyphs;
        shown.push({ page: index, x, y, font: name, text: order.map((g) => g.text).join(""), glyphs });
      }
      operands.length = 0;
    }
  });
  const lines = new Map<string, Shown[]>();
  for (const s of shown) {
    const key = `${s.page}:${s.y.toFixed(1)}`;
    lines.set(key, [...(lines.get(key) ?? []), s]);
  }
  const text = [...lines.values()]
    .sort((a, b) => (a[0]?.page ?? 0) - (b[0]?.page ?? 0) || (b[0]?.y ?? 0) - (a[0]?.y ?? 0))
    .map((line) =>
      line
        .sort((a, b) => a.x - b.x)
        .map((s) => s.text)
        .join(""),
    )
    .join("\n");
  const flow = shown
    .map((s, i) => (i > 0 && (shown[i - 1]?.y !== s.y || shown[i - 1]?.page !== s.page) ? ` ${s.text}` : s.text))
    .join("");
  // pdf-lib names an embedded font after its PostScript name and a random number.
  const fontNames = new Set(shown.map((s) => s.font.replace(/-\d+$/, "")));
  return { pages: doc.getPageCount(), text, flow, shown, fonts: [...fontNames].sort() };
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

/**
 * Sets demo school 2's logo as the platform's write does: its row in `DB`, then its anchor in each
 * shard that holds one (docs/scaling.md "Anchors"; a database without it changes nothing).
 */
async function setLogo(t: TestApp, logo: string | null) {
  for (const db of Object.values(t.deps.shards ?? { DB: t.db })) {
    await db.update(schools).set({ logo }).where(eq(schools.id, SOUTH));
  }
}

describe("the PDF writer", () => {
  it("measures and wraps text as drawn, embeds only the fonts used, and writes a loadable file", async () => {
    const pdf = await PdfDocument.create(env.ASSETS, { title: "Prueba", at: t.clock.now() });
    await pdf.prepare(["¿Dónde está Ñandú?", "Nguyễn Thị Minh Khai"], "regular");
    // Composed and decomposed Vietnamese are one text (NFC); an accent does not change a width much.
    expect(pdf.width("Nguye\u0302\u0303n", 10)).toBeCloseTo(pdf.width("Nguyễn", 10), 5);
    expect(pdf.width("Hola", 10)).toBeGreaterThan(pdf.width("Hol", 10));
    // Wrapped at spaces, each line within the width; a word wider than the width is broken.
    const name = "Héctor Alejandro Domínguez de la Fuente";
    const lines = pdf.lines(name, 80, 9);
    expect(lines.length).toBeGreaterThan(1);
    expect(lines.join(" ")).toBe(name);
    for (const line of lines) expect(pdf.width(line, 9)).toBeLessThanOrEqual(80);
    expect(pdf.lines("Supercalifragilisticoespialidoso", 40, 9).join("")).toBe("Supercalifragilisticoespialidoso");
    const page = pdf.addPage();
    page.text(40, 800, "¿Dónde está Ñandú? ¡Aquí! (ü)", { weight: "bold" });
    page.line(40, 790, 200, 790);
    pdf.addPage().text(40, 800, "Página 2 · Nguyễn Thị Minh Khai");
    const parsed = await pdfText(await pdf.toBytes());
    expect(parsed.pages).toBe(2);
    expect(parsed.text).toContain("¿Dónde está Ñandú? ¡Aquí! (ü)");
    expect(parsed.text).toContain("Página 2 · Nguyễn Thị Minh Khai");
    expect(parsed.text).not.toContain("\ufffd");
    // Latin only: the two Noto Sans subsets, no fallback font.
    expect(parsed.fonts).toEqual(["/NotoSans-Bold", "/NotoSans-Regular"]);
  });

  it("runs inside workerd as bundled: pdf-lib's standard fonts (Latin-1 only) are left out", async () => {
    const doc = await PDFDocument.create();
    await expect(doc.embedFont("Helvetica")).rejects.toThrow("not bundled");
  });

  it("serves every font it names from the static assets", async () => {
    for (const family of FAMILIES) {
      for (const file of Object.values(family.files)) {
        const res = await env.ASSETS.fetch(`https://assets.invalid${FONT_PATH}${file}`);
        expect(res.status, file).toBe(200);
        const bytes = new Uint8Array(await res.arrayBuffer());
        // A TrueType font (0x00010000), not an HTML page in its place.
        expect([...bytes.subarray(0, 4)], file).toEqual([0, 1, 0, 0]);
      }
    }
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
    expect(image).toMatchObject({ width: 2, height: 2, dict: { ColorSpace: "DeviceRGB", Filter: "FlateDecode" } });
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

  it("embeds a PNG without alpha as it is, with its predictors; a palette as an indexed colour space; a JPEG as it is", () => {
    expect(readJpeg(JPEG)).toMatchObject({
      width: 8,
      height: 4,
      dict: { ColorSpace: "DeviceRGB", Filter: "DCTDecode" },
    });
    expect(readJpeg(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toBeUndefined();
    const rgb = png(1, 1, 2, [[0, 1, 2, 3]]);
    const image = readPng(rgb);
    expect(image?.dict.DecodeParms).toEqual({ Predictor: 15, Colors: 3, BitsPerComponent: 8, Columns: 1 });
    expect(image?.alpha).toBeUndefined();
    expect([...unzlibSync(image?.stream ?? new Uint8Array())]).toEqual([0, 1, 2, 3]);
    const indexed = readPng(png(1, 1, 3, [[0, 1]], [["PLTE", [0, 0, 0, 255, 128, 0]]]));
    expect(indexed?.dict.ColorSpace).toEqual(["Indexed", "DeviceRGB", 1, new Uint8Array([0, 0, 0, 255, 128, 0])]);
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
    await setLogo(t, "2/logo/logo.png");
    try {
      const res = await t.request(`${S}/final-status/pdf?date=${MONDAY}`, { token: await admin(), school: SOUTH });
      expect(res.status).toBe(200);
      const doc = await PDFDocument.load(new Uint8Array(await res.arrayBuffer()));
      // Every page shows the image, whose soft mask is the alpha channel.
      for (const page of doc.getPages()) {
        const images = page.node.Resources()?.lookup(PDFName.of("XObject"), PDFDict);
        const [ref] = images?.values() ?? [];
        const image = doc.context.lookup(ref, PDFStream);
        expect(image.dict.get(PDFName.of("Subtype"))).toBe(PDFName.of("Image"));
        const mask = image.dict.lookup(PDFName.of("SMask"), PDFStream);
        expect(mask).toBeInstanceOf(PDFRawStream);
        expect([...unzlibSync((mask as PDFRawStream).contents)]).toEqual([255, 128, 0, 255]);
      }
    } finally {
      await setLogo(t, null);
    }
  });
});

describe("route list PDFs", () => {
  it("one route and every route: each rider named, the logo embedded, the list marked printed", async () => {
    const names: [string, string][] = Array.from({ length: 70 }, (_, i) => [`Niña${i}`, i % 2 ? "Muñoz" : "Gómez"]);
    const big = await makeRoute(t, SOUTH, { seats: 80, riders: names, name: "Ruta Águila" });
    const small = await makeRoute(t, SOUTH, { riders: [["José", "Peña"]], name: "Ruta Búho" });
    await env.DOCUMENTS.put("2/logo/logo.jpg", JPEG);
    await setLogo(t, "2/logo/logo.jpg");
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
      await setLogo(t, null);
    }
  });

  it("draws every name whole, in its script: Vietnamese, Arabic (shaped), Chinese, a long Spanish name", async () => {
    const route = await makeRoute(t, SOUTH, {
      name: "Ruta 北 Nguyễn",
      riders: [
        ["Thị Minh Khai", "Nguyễn"],
        ["محمد", "عبد الله"],
        ["小明", "王"],
        ["Héctor Alejandro", "Domínguez de la Fuente"],
      ],
    });
    const receivers = [
      ["Nguyễn Thị Minh Khai"],
      ["محمد عبد الله"],
      ["王小明", "Ana López"],
      ["Héctor Alejandro Domínguez de la Fuente", "María José Fernández-Villanueva Ortega", "Ana López"],
    ];
    await (await t.schoolDb(SOUTH)).insert(trustedPeople).values(
      route.studentIds.flatMap((studentId, i) =>
        (receivers[i] ?? []).map((name) => ({
          schoolId: SOUTH,
          studentId,
          name,
          relationship: "aunt",
          phone: "+15550001234",
          status: "approved" as const,
          decidedAt: "2026-11-01T00:00:00.000Z",
        })),
      ),
    );
    const res = await t.request(`${S}/route/${route.routeId}/final-status/pdf?date=${MONDAY}`, {
      token: await admin(),
      school: SOUTH,
    });
    expect(res.status).toBe(200);
    const parsed = await pdfText(new Uint8Array(await res.arrayBuffer()));
    const students = [
      "Nguyễn, Thị Minh Khai",
      "عبد الله, محمد",
      "王, 小明",
      "Domínguez de la Fuente, Héctor Alejandro",
    ];
    for (const name of [...students, ...receivers.flat(), "Ruta 北 Nguyễn"]) expect(parsed.flow).toContain(name);
    // Nothing cut, no missing glyph.
    expect(parsed.flow).not.toContain("…");
    expect(parsed.flow).not.toContain("\ufffd");
    // The long names wrapped: drawn on more than one line, each line a part of them.
    expect(parsed.shown.some((s) => s.text.startsWith("Héctor Alejandro Domínguez") && !s.text.includes("Fuente")));
    // Each script in its font: the Arabic and CJK fallbacks, in the weights drawn (the route's name is bold).
    expect(parsed.fonts).toEqual([
      "/NotoNaskhArabic",
      "/NotoSans-Bold",
      "/NotoSans-Regular",
      "/NotoSansSC-Bold",
      "/NotoSansSC-Regular",
    ]);
    // Arabic is shaped: "محمد" begins with an initial meem and has a medial one, two glyphs for one letter.
    const meem = new Set(
      parsed.shown
        .filter((s) => s.font.startsWith("/NotoNaskhArabic"))
        .flatMap((s) => s.glyphs.filter((g) => g.text === "م").map((g) => g.code)),
    );
    expect(meem.size).toBeGreaterThanOrEqual(2);
  });

  it("a weekend prints one page that says no route runs", async () => {
    const res = await t.request(`${S}/final-status/pdf?date=2027-03-06`, { token: await admin(), school: SOUTH });
    expect(res.status).toBe(200);
    const parsed = await pdfText(new Uint8Array(await res.arrayBuffer()));
    expect(parsed.pages).toBe(1);
    expect(parsed.text).toContain("2027-03-06 is not a school day: no route runs");
  });
});
