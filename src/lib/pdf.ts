/**
 * PDFs drawn with pdf-lib: A4 pages of text, lines, filled rectangles and an image (a JPEG or PNG
 * logo), the text in TrueType fonts embedded as subsets (fontkit 3 lays the text out and writes the
 * subsets: a document carries only the glyphs it draws, with a ToUnicode map so its text can be
 * copied and searched). The fonts are Workers Static Assets (public/fonts, copied from their npm
 * packages by scripts/docs-assets.mjs), read through the ASSETS binding and kept for the isolate's
 * life: they are never bundle bytes.
 *
 * Fonts are picked per character: Noto Sans (Latin with Vietnamese, Greek, Cyrillic) draws every
 * character it has; one it lacks is drawn by the first fallback family whose ranges hold it and
 * whose font has it, Noto Naskh Arabic and then Noto Sans SC (CJK ideographs, kana, full-width
 * forms). A fallback is fetched and embedded only when a document's text needs it (`prepare`), so
 * a list of Latin names embeds two small subsets (regular and bold). Arabic is shaped (fontkit's
 * Arabic shaper: joining forms and ligatures) and runs right to left within its run; a line runs
 * left to right, its runs in reading order (no full bidirectional algorithm, docs/domain.md). A
 * character no font has is drawn as the missing-glyph box.
 */
/// <reference path="./pdf-lib/fontkit.d.ts" />
import { zlibSync } from "fflate";
import * as fontkit from "fontkit/core";
import { TTFFont } from "fontkit/formats/TTFFont";
import { ArabicShaper } from "fontkit/shapers/ArabicShaper";
import { PDFDocument, type PDFFont, PDFHexString, PDFName, type PDFPage, type PDFRef } from "pdf-lib";
import type { AssetStore } from "../deps";
import { readImage } from "./pdf-image";

fontkit.registerFormat(TTFFont);
fontkit.registerShaper(ArabicShaper);

export const A4 = { width: 595.28, height: 841.89 } as const;

export type Weight = "regular" | "bold";

interface Family {
  /** Font files under FONT_PATH among the static assets. */
  files: Record<Weight, string>;
  /** OpenType features switched off in its layout. */
  off?: readonly string[];
  /** Its size against the text's (a script whose letters are drawn smaller reads as large as Latin). */
  scale?: number;
  /** Code points it is fetched for (when the primary font lacks them). */
  ranges: readonly (readonly [number, number])[];
}

/** Where the fonts are among the static assets (scripts/docs-assets.mjs copies them there). */
export const FONT_PATH = "/fonts/";

/** The primary family first (it draws whatever it has), then the fallbacks in order. */
export const FAMILIES: readonly Family[] = [
  {
    files: { regular: "NotoSans-Regular.ttf", bold: "NotoSans-Bold.ttf" },
    ranges: [[0, 0x10ffff]],
    // Its glyph composition splits "ị" and "ọ" (Vietnamese, Yoruba) into a letter and a dot placed by
    // mark positioning, which pdf-lib does not apply: off, each precomposed letter is its own glyph.
    off: ["ccmp"],
  },
  {
    files: { regular: "NotoNaskhArabic-Regular.ttf", bold: "NotoNaskhArabic-Bold.ttf" },
    // Naskh's letters are small beside Noto Sans's at one size.
    scale: 1.15,
    // Arabic, its supplement and extended blocks, its presentation forms.
    ranges: [
      [0x0600, 0x06ff],
      [0x0750, 0x077f],
      [0x0870, 0x08ff],
      [0xfb50, 0xfdff],
      [0xfe70, 0xfeff],
    ],
  },
  {
    files: { regular: "NotoSansSC-Regular.ttf", bold: "NotoSansSC-Bold.ttf" },
    // CJK radicals, punctuation, kana and bopomofo; the ideographs (extension A, the unified block,
    // compatibility ideographs, extensions B onwards); vertical and full-width forms.
    ranges: [
      [0x2e80, 0x2fdf],
      [0x3000, 0x31ff],
      [0x3400, 0x4dbf],
      [0x4e00, 0x9fff],
      [0xf900, 0xfaff],
      [0xfe30, 0xfe4f],
      [0xff00, 0xffef],
      [0x20000, 0x3134f],
    ],
  },
];

/**
 * A font file and fontkit's font of it, kept for the isolate's life once read (a resolved value
 * only: a pending promise would tie one request's I/O to another's). The CJK files are ~10 MB each
 * and read only by a list that has such a name.
 */
const files = new Map<string, { bytes: Uint8Array; font: fontkit.Font }>();
/** The font parsed from each file's bytes (what pdf-lib hands `kit.create`). */
const parsed = new WeakMap<Uint8Array, fontkit.Font>();

async function fontFile(assets: AssetStore, file: string): Promise<{ bytes: Uint8Array; font: fontkit.Font }> {
  const cached = files.get(file);
  if (cached) return cached;
  const res = await assets.fetch(`https://assets.invalid${FONT_PATH}${file}`);
  if (!res.ok) throw new Error(`the PDF font ${FONT_PATH}${file} is not among the static assets (${res.status})`);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const entry = files.get(file) ?? { bytes, font: forPdfLib(fontkit.create(bytes)) };
  parsed.set(entry.bytes, entry.font);
  files.set(file, entry);
  return entry;
}

/**
 * Scripts drawn one glyph per character, without shaping: Latin (precomposed letters: the text is
 * NFC), Greek, Cyrillic, their punctuation and symbols, CJK ideographs and kana. Names in them need
 * no ligature or contextual form, and pdf-lib applies no positioning (kerning) anyway; Arabic and
 * every other script go through fontkit's shaping.
 */
const UNSHAPED =
  /^[\u0020-\u052f\u1e00-\u1fff\u2000-\u206f\u20a0-\u20cf\u2100-\u214f\u2e80-\u2fdf\u3000-\u31ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\ufe30-\ufe4f\uff00-\uffef\u{20000}-\u{3134f}]*$/u;

/**
 * fontkit's font made ready for pdf-lib 1.17: its subsets give the Node-style stream pdf-lib reads
 * (`encodeStream`, the API of pdf-lib's own fontkit fork; fontkit 3 encodes at once, `encode`), and
 * its layouts cost what they need to. pdf-lib lays a text out each time it measures or draws it,
 * and fontkit plans the shaping anew for every call (a list of 3,000 riders took seconds): a text
 * of UNSHAPED scripts is its characters' glyphs, and the layouts of the others are kept per
 * document (pdf-lib hands every call of one embedding the same features object: they are kept
 * under it, and go with it).
 */
function forPdfLib(font: fontkit.Font): fontkit.Font {
  const createSubset = font.createSubset.bind(font);
  font.createSubset = () => {
    const subset = createSubset();
    return Object.assign(subset, { encodeStream: () => streamOf(() => subset.encode()) });
  };
  // Coverage and glyphs by code point, kept with the font (fontkit searches the cmap each time).
  const has = new Map<number, boolean>();
  const hasGlyph = font.hasGlyphForCodePoint.bind(font);
  font.hasGlyphForCodePoint = (cp: number) => {
    let answer = has.get(cp);
    if (answer === undefined) {
      answer = hasGlyph(cp);
      has.set(cp, answer);
    }
    return answer;
  };
  const glyphs = new Map<number, unknown>();
  const glyphOf = (cp: number) => {
    let glyph = glyphs.get(cp);
    if (glyph === undefined) {
      glyph = font.glyphForCodePoint(cp);
      glyphs.set(cp, glyph);
    }
    return glyph;
  };
  const layout = font.layout.bind(font);
  const layouts = new WeakMap<object, Map<string, unknown>>();
  font.layout = (text: string, features?: object) => {
    if (UNSHAPED.test(text)) return { glyphs: Array.from(text, (ch) => glyphOf(ch.codePointAt(0) ?? 0)) };
    if (!features) return layout(text, features);
    let kept = layouts.get(features);
    if (!kept) {
      kept = new Map();
      layouts.set(features, kept);
    }
    let run = kept.get(text);
    if (run === undefined) {
      run = layout(text, features);
      kept.set(text, run);
    }
    return run;
  };
  return font;
}

function streamOf(encode: () => Uint8Array) {
  const listeners = new Map<string, (value?: unknown) => void>();
  const stream = {
    on(event: string, listener: (value?: unknown) => void) {
      listeners.set(event, listener);
      return stream;
    },
  };
  queueMicrotask(() => {
    try {
      listeners.get("data")?.(encode());
      listeners.get("end")?.();
    } catch (err) {
      listeners.get("error")?.(err);
    }
  });
  return stream;
}

/**
 * What pdf-lib registers: the font already parsed for the bytes it is given (every embedding of a
 * file in the isolate shares one parse and its glyph caches). pdf-lib's `Fontkit` type describes
 * its own fork's font; fontkit 3's has every member pdf-lib reads (layout, subsets, metrics).
 */
const kit = {
  create: (bytes: Uint8Array) => parsed.get(bytes) ?? forPdfLib(fontkit.create(bytes)),
} as unknown as Parameters<PDFDocument["registerFontkit"]>[0];

interface Face {
  pdf: PDFFont;
  font: fontkit.Font;
  /** Its name in the pages' resources: /F0, /F1, ... */
  key: string;
  /** Family.scale. */
  scale: number;
}

interface Run {
  text: string;
  face: Face;
}

/** Spaces, punctuation, symbols, digits and format characters: drawn with the text around them. */
const NEUTRAL = /[\p{White_Space}\p{P}\p{S}\p{Nd}\p{Cf}]/u;
/** Line breaks, tabs and other controls are drawn as spaces; bidirectional controls are dropped. */
const CONTROL = /[\p{Cc}\u2028\u2029]/gu;
const BIDI = /[\u200e\u200f\u202a-\u202e\u2066-\u2069]/gu;

/** Printable Latin-1: composed as it is, and every character in Noto Sans. */
const LATIN1 = /^[\u0020-\u007e\u00a0-\u00ff]*$/;

/** Text as it is drawn: composed (NFC: "ễ" one glyph, not "e" and two marks), one line. */
const clean = (text: string) => text.normalize("NFC").replace(CONTROL, " ").replace(BIDI, "");

const inRanges = (family: Family, cp: number) => family.ranges.some(([from, to]) => cp >= from && cp <= to);

export class PdfDocument {
  readonly pages: PdfPage[] = [];
  private embedded = 0;
  /** The embedded faces, by family (FAMILIES' order) and weight. */
  private readonly faces: Partial<Record<Weight, Face>>[] = FAMILIES.map(() => ({}));
  /** Texts cut into runs, and code points' faces, by weight: a list repeats its words and names. */
  private readonly kept = { regular: new Map<string, Run[]>(), bold: new Map<string, Run[]>() };
  private readonly faceCache = { regular: new Map<number, Face>(), bold: new Map<number, Face>() };
  /** Each run's glyphs as drawn (a literal string), and its width at 1 point, by font. */
  private readonly encoded = new Map<PDFFont, Map<string, string>>();
  private readonly widths = new Map<PDFFont, Map<string, number>>();

  private constructor(
    private readonly doc: PDFDocument,
    private readonly assets: AssetStore,
  ) {}

  /** A document with the primary fonts embedded (their subsets hold only what is drawn). */
  static async create(assets: AssetStore, info: { title: string; at: Date }): Promise<PdfDocument> {
    const doc = await PDFDocument.create({ updateMetadata: false });
    doc.registerFontkit(kit);
    doc.setTitle(info.title);
    doc.setProducer("school-api");
    doc.setCreationDate(info.at);
    doc.setModificationDate(info.at);
    const pdf = new PdfDocument(doc, assets);
    await pdf.embed(0, "regular");
    await pdf.embed(0, "bold");
    return pdf;
  }

  private async embed(family: number, weight: Weight): Promise<void> {
    const faces = this.faces[family];
    const files = FAMILIES[family]?.files;
    if (!faces || !files || faces[weight]) return;
    const { bytes, font } = await fontFile(this.assets, files[weight]);
    if (faces[weight]) return;
    // A new object for each embedding: the key of its kept layouts (forPdfLib).
    const features = Object.fromEntries((FAMILIES[family]?.off ?? []).map((feature) => [feature, false]));
    const pdf = await this.doc.embedFont(bytes, { subset: true, features });
    this.embedded += 1;
    faces[weight] = { pdf, font, key: `F${this.embedded - 1}`, scale: FAMILIES[family]?.scale ?? 1 };
  }

  private primary(weight: Weight): Face {
    const face = this.faces[0]?.[weight];
    if (!face) throw new Error("the primary PDF font is not embedded");
    return face;
  }

  /**
   * Fetches and embeds the fallback fonts that `texts` need in `weight`: call it with a document's
   * texts before measuring or drawing them (drawing is synchronous).
   */
  async prepare(texts: Iterable<string>, weight: Weight): Promise<void> {
    const primary = this.primary(weight).font;
    const needed = new Set<number>();
    for (const text of texts) {
      for (const ch of clean(text)) {
        const cp = ch.codePointAt(0) ?? 0;
        if (primary.hasGlyphForCodePoint(cp)) continue;
        const family = FAMILIES.findIndex((f, i) => i > 0 && inRanges(f, cp));
        if (family > 0) needed.add(family);
      }
    }
    for (const family of needed) await this.embed(family, weight);
  }

  /** The face that draws `cp`: the primary font's, else a fallback's (the other weight if only that one is embedded). */
  private faceOf(cp: number, weight: Weight): Face {
    let face = this.faceCache[weight].get(cp);
    if (!face) {
      face = this.findFace(cp, weight);
      this.faceCache[weight].set(cp, face);
    }
    return face;
  }

  private findFace(cp: number, weight: Weight): Face {
    const primary = this.primary(weight);
    if (primary.font.hasGlyphForCodePoint(cp)) return primary;
    for (let i = 1; i < FAMILIES.length; i++) {
      const family = FAMILIES[i];
      const faces = this.faces[i];
      if (!family || !faces || !inRanges(family, cp)) continue;
      const face = faces[weight] ?? faces[weight === "bold" ? "regular" : "bold"];
      if (face?.font.hasGlyphForCodePoint(cp)) return face;
    }
    return primary;
  }

  /**
   * `text` in runs of one face each. A neutral character (space, punctuation, digit) joins the
   * strong characters around it when both sides are drawn by one face that has it, and otherwise
   * goes to the primary face: in "Ana, محمد" the comma and space stay out of the Arabic run, which
   * is laid out right to left.
   */
  runs(text: string, weight: Weight): Run[] {
    let runs = this.kept[weight].get(text);
    if (!runs) {
      runs = this.cut(text, weight);
      this.kept[weight].set(text, runs);
    }
    return runs;
  }

  private cut(text: string, weight: Weight): Run[] {
    // Most names: Latin-1 (already composed), all in the primary font.
    if (LATIN1.test(text)) return text ? [{ text, face: this.primary(weight) }] : [];
    const chars = Array.from(clean(text));
    const strong = chars.map((ch) => (NEUTRAL.test(ch) ? undefined : this.faceOf(ch.codePointAt(0) ?? 0, weight)));
    const before: (Face | undefined)[] = [];
    let last: Face | undefined;
    for (let i = 0; i < chars.length; i++) {
      before[i] = last;
      last = strong[i] ?? last;
    }
    const primary = this.primary(weight);
    const runs: Run[] = [];
    let after: Face | undefined;
    const faces: Face[] = [];
    for (let i = chars.length - 1; i >= 0; i--) {
      const cp = chars[i]?.codePointAt(0) ?? 0;
      let face = strong[i];
      if (!face) {
        const around = before[i] === after ? after : undefined;
        face = around?.font.hasGlyphForCodePoint(cp) ? around : this.faceOf(cp, weight);
      }
      faces[i] = face;
      after = strong[i] ?? after;
    }
    chars.forEach((ch, i) => {
      const face = faces[i] ?? primary;
      const run = runs.at(-1);
      if (run?.face === face) run.text += ch;
      else runs.push({ text: ch, face });
    });
    return runs;
  }

  /** The width of `text` at `size` points, as it is drawn. */
  width(text: string, size: number, weight: Weight = "regular"): number {
    let width = 0;
    for (const run of this.runs(text, weight)) width += this.runWidth(run);
    return width * size;
  }

  /**
   * A run's glyphs as a PDF string: their ids in the font's subset (which they join), two bytes
   * each, as a literal string (half a hex string's size, and the content stream's deflate time).
   */
  glyphs(run: Run): string {
    let encoded = this.encoded.get(run.face.pdf);
    if (!encoded) {
      encoded = new Map();
      this.encoded.set(run.face.pdf, encoded);
    }
    let glyphs = encoded.get(run.text);
    if (glyphs === undefined) {
      glyphs = literal(run.face.pdf.encodeText(run.text).asString());
      encoded.set(run.text, glyphs);
    }
    return glyphs;
  }

  /** A run's width at 1 point. */
  runWidth(run: Run): number {
    let widths = this.widths.get(run.face.pdf);
    if (!widths) {
      widths = new Map();
      this.widths.set(run.face.pdf, widths);
    }
    let width = widths.get(run.text);
    if (width === undefined) {
      width = run.face.pdf.widthOfTextAtSize(run.text, 1) * run.face.scale;
      widths.set(run.text, width);
    }
    return width;
  }

  /**
   * `text` broken into lines no wider than `width`: at spaces, and inside a word only when the
   * word alone is wider (a long name without spaces, a name in Chinese characters).
   */
  lines(text: string, width: number, size: number, weight: Weight = "regular"): string[] {
    const words = clean(text).split(" ").filter(Boolean);
    const space = this.width(" ", size, weight);
    const lines: string[] = [];
    let line = "";
    let used = 0;
    for (const word of words) {
      const w = this.width(word, size, weight);
      if (line && used + space + w <= width) {
        line += ` ${word}`;
        used += space + w;
        continue;
      }
      if (line) lines.push(line);
      if (w <= width) {
        line = word;
        used = w;
        continue;
      }
      const pieces = this.breakWord(word, width, size, weight);
      line = pieces.pop() ?? "";
      used = this.width(line, size, weight);
      lines.push(...pieces);
    }
    if (line) lines.push(line);
    return lines;
  }

  /** A word wider than `width`, in pieces that fit (at least a character each). */
  private breakWord(word: string, width: number, size: number, weight: Weight): string[] {
    const pieces: string[] = [];
    let piece = "";
    for (const ch of word) {
      if (piece && this.width(piece + ch, size, weight) > width) {
        pieces.push(piece);
        piece = ch;
      } else piece += ch;
    }
    if (piece) pieces.push(piece);
    return pieces;
  }

  /**
   * Embeds a JPEG or a PNG as ./pdf-image.ts reads it (with its soft mask when it has alpha);
   * undefined when the bytes are neither, or a kind of PNG it does not read.
   */
  image(bytes: Uint8Array): PdfImageObject | undefined {
    const image = readImage(bytes);
    if (!image) return undefined;
    const context = this.doc.context;
    const { ColorSpace: space, ...dict } = image.dict;
    const size = { Type: "XObject", Subtype: "Image", Width: image.width, Height: image.height };
    const mask =
      image.alpha &&
      context.register(
        context.stream(image.alpha, { ...size, ColorSpace: "DeviceGray", BitsPerComponent: 8, Filter: "FlateDecode" }),
      );
    const ColorSpace =
      typeof space === "string"
        ? space
        : [
            space[0],
            space[1],
            space[2],
            PDFHexString.of([...space[3]].map((b) => b.toString(16).padStart(2, "0")).join("")),
          ];
    const ref = context.register(
      context.stream(image.stream, { ...size, ...dict, ColorSpace, ...(mask ? { SMask: mask } : {}) }),
    );
    return { width: image.width, height: image.height, ref };
  }

  addPage(): PdfPage {
    const page = new PdfPage(this, this.doc.addPage([A4.width, A4.height]));
    this.pages.push(page);
    return page;
  }

  /** The file (PDF 1.7 with object streams). */
  async toBytes(): Promise<Uint8Array<ArrayBuffer>> {
    const context = this.doc.context;
    for (const page of this.pages) {
      // Level 1: content streams of short text lines deflate nearly as well, in a third of the CPU.
      const content = zlibSync(bytesOf(page.ops.join("\n")), { level: 1 });
      page.page.node.set(PDFName.Contents, context.register(context.stream(content, { Filter: "FlateDecode" })));
    }
    // Every object at once: pdf-lib otherwise yields to the event loop every 50 objects.
    // No form: nothing to update (which would draw in a standard font, src/lib/pdf-lib/standard-fonts.ts).
    const bytes = await this.doc.save({ objectsPerTick: Number.POSITIVE_INFINITY, updateFieldAppearances: false });
    return new Uint8Array(bytes);
  }
}

/** An image in the document, to draw on any page. */
export interface PdfImageObject {
  width: number;
  height: number;
  ref: PDFRef;
}

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** Bytes a literal string escapes: its delimiters, the escape, and CR (which a reader takes for a line end). */
const ESCAPED: Record<number, string> = { 40: "\\(", 41: "\\)", 92: "\\\\", 13: "\\r" };

/** Each byte in hex (either case, as pdf-lib writes it) -> its character in a literal string. */
const BYTES = new Map<string, string>();
for (let b = 0; b < 256; b++) {
  const ch = ESCAPED[b] ?? String.fromCharCode(b);
  const hex = b.toString(16).padStart(2, "0");
  BYTES.set(hex, ch);
  BYTES.set(hex.toUpperCase(), ch);
}

/** Glyph codes given in hex as a literal string of their bytes (a string of chars 0-255). */
function literal(hex: string): string {
  const chars: string[] = ["("];
  for (let i = 0; i < hex.length; i += 2) chars.push(BYTES.get(hex.slice(i, i + 2)) ?? "");
  chars.push(")");
  return chars.join("");
}

/** A string of chars 0-255 (the content stream: ASCII operators, binary strings) as its bytes. */
function bytesOf(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * One page: drawing in PDF user space (points, origin at the bottom left). Its content stream is
 * written as text and deflated once when the document is saved: pdf-lib's drawing methods build
 * eight operator objects for each string drawn (and a new font resource per call), which for a list
 * of 3,000 riders cost more than the rest of the document together.
 */
export class PdfPage {
  readonly ops: string[] = [];
  /** The fonts in this page's resources. */
  private readonly fonts = new Set<PDFFont>();

  constructor(
    private readonly doc: PdfDocument,
    readonly page: PDFPage,
  ) {}

  /** Draws `text` with its baseline at `y`, from `x`; answers its width. */
  text(x: number, y: number, text: string, options: { size?: number; weight?: Weight; gray?: number } = {}): number {
    const size = options.size ?? 10;
    let at = x;
    let font: PDFFont | undefined;
    const ops = [`BT ${num(options.gray ?? 0)} g`];
    for (const run of this.doc.runs(text, options.weight ?? "regular")) {
      if (!this.fonts.has(run.face.pdf)) {
        this.page.node.setFontDictionary(PDFName.of(run.face.key), run.face.pdf.ref);
        this.fonts.add(run.face.pdf);
      }
      if (font !== run.face.pdf) ops.push(`/${run.face.key} ${num(size * run.face.scale)} Tf`);
      font = run.face.pdf;
      ops.push(`1 0 0 1 ${num(at)} ${num(y)} Tm ${this.doc.glyphs(run)} Tj`);
      at += this.doc.runWidth(run) * size;
    }
    ops.push("ET");
    this.ops.push(ops.join(" "));
    return at - x;
  }

  line(x1: number, y1: number, x2: number, y2: number, width = 0.5, gray = 0): this {
    this.ops.push(`${num(gray)} G ${num(width)} w ${num(x1)} ${num(y1)} m ${num(x2)} ${num(y2)} l S`);
    return this;
  }

  rect(x: number, y: number, width: number, height: number, gray: number): this {
    this.ops.push(`${num(gray)} g ${num(x)} ${num(y)} ${num(width)} ${num(height)} re f 0 g`);
    return this;
  }

  image(image: PdfImageObject, x: number, y: number, width: number, height: number): this {
    const name = this.page.node.newXObject("Image", image.ref).toString();
    this.ops.push(`q ${num(width)} 0 0 ${num(height)} ${num(x)} ${num(y)} cm ${name} Do Q`);
    return this;
  }
}
