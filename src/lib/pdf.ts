/**
 * A small PDF 1.4 writer: A4 pages of text and lines in the standard Helvetica fonts (not embedded,
 * WinAnsiEncoding, so Latin text with accents renders: á é í ó ú ñ ü ¿ ¡), an optional JPEG or PNG
 * image (./pdf-image.ts), content streams deflated with fflate (FlateDecode), and a correct
 * cross-reference table. pdf-lib would add ~178 KiB gzip to the Worker (docs/performance.md).
 */
import { zlibSync } from "fflate";
import type { PdfImage } from "./pdf-image";

export { type PdfImage, readImage, readJpeg, readPng } from "./pdf-image";

export const A4 = { width: 595.28, height: 841.89 } as const;

export type FontName = "regular" | "bold";

/** Widths of ASCII 32..126 in 1/1000 em (the fonts' AFM metrics). */
const WIDTHS: Record<FontName, number[]> = {
  regular: [
    278, 278, 355, 556, 556, 889, 667, 191, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556,
    556, 556, 556, 278, 278, 584, 584, 584, 556, 1015, 667, 667, 722, 722, 667, 611, 778, 722, 278, 500, 667, 556, 833,
    722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 278, 278, 278, 469, 556, 333, 556, 556, 500, 556,
    556, 278, 556, 556, 222, 222, 500, 222, 833, 556, 556, 556, 556, 333, 500, 278, 556, 500, 722, 500, 500, 500, 334,
    260, 334, 584,
  ],
  bold: [
    278, 333, 474, 556, 556, 889, 722, 238, 333, 333, 389, 584, 278, 333, 278, 278, 556, 556, 556, 556, 556, 556, 556,
    556, 556, 556, 333, 333, 584, 584, 584, 611, 975, 722, 722, 722, 722, 667, 611, 778, 722, 278, 556, 722, 611, 833,
    722, 778, 667, 778, 722, 667, 611, 722, 667, 944, 667, 667, 611, 333, 278, 333, 584, 556, 333, 556, 611, 556, 611,
    556, 333, 611, 611, 278, 278, 556, 278, 889, 611, 611, 611, 611, 389, 556, 333, 611, 556, 778, 556, 556, 500, 389,
    280, 389, 584,
  ],
};

/** WinAnsi codes of the characters outside Latin-1 that it has (the 0x80..0x9F block). */
const WIN_ANSI: Record<string, number> = {
  "€": 0x80,
  "‚": 0x82,
  "„": 0x84,
  "…": 0x85,
  "‘": 0x91,
  "’": 0x92,
  "“": 0x93,
  "”": 0x94,
  "•": 0x95,
  "–": 0x96,
  "—": 0x97,
};

/** A character's WinAnsi code, or `?` for one the encoding lacks. */
function codeOf(ch: string): number {
  const c = ch.codePointAt(0) ?? 63;
  if ((c >= 32 && c <= 126) || (c >= 0xa0 && c <= 0xff)) return c;
  return WIN_ANSI[ch] ?? 63;
}

/** The base letter of each character beyond ASCII met so far (`normalize` per character is slow). */
const baseLetters = new Map<number, number>();

function baseLetter(code: number): number {
  let base = baseLetters.get(code);
  if (base === undefined) {
    base = String.fromCharCode(code).normalize("NFD").charCodeAt(0);
    baseLetters.set(code, base);
  }
  return base;
}

/** The width of `text` at `size` points; a letter with a diacritic is as wide as its base letter. */
export function textWidth(text: string, size: number, font: FontName = "regular"): number {
  const widths = WIDTHS[font];
  let total = 0;
  for (let i = 0; i < text.length; i++) {
    let c = text.charCodeAt(i);
    if (c > 126) c = baseLetter(c);
    total += c >= 32 && c <= 126 ? (widths[c - 32] ?? 556) : 556;
  }
  return (total * size) / 1000;
}

/** `text` cut with an ellipsis to fit `width` points. */
export function fitText(text: string, width: number, size: number, font: FontName = "regular"): string {
  if (textWidth(text, size, font) <= width) return text;
  let cut = text;
  while (cut.length > 0 && textWidth(`${cut}…`, size, font) > width) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** Characters a literal must escape, and characters WinAnsi lacks or places elsewhere. */
const ESCAPED = /[()\\]/g;
const OUTSIDE = /[^\x20-\x7e\xa0-\xff]/g;

/**
 * A PDF string literal in WinAnsi bytes (kept as a one-byte-per-char string until written):
 * regular expressions over the whole text, not a loop per character (thousands of cells a file).
 */
function literal(text: string): string {
  return `(${text.replace(ESCAPED, "\\$&").replace(OUTSIDE, (ch) => String.fromCharCode(codeOf(ch)))})`;
}

const num = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/** One page: drawing operators in PDF user space (points, origin at the bottom left). */
export class PdfPage {
  readonly ops: string[] = [];

  text(x: number, y: number, text: string, options: { size?: number; font?: FontName; gray?: number } = {}): this {
    const font = options.font === "bold" ? "F2" : "F1";
    const gray = options.gray === undefined ? "" : `${num(options.gray)} g `;
    this.ops.push(
      `BT ${gray}/${font} ${num(options.size ?? 10)} Tf ${num(x)} ${num(y)} Td ${literal(text)} Tj ET${gray ? " 0 g" : ""}`,
    );
    return this;
  }

  line(x1: number, y1: number, x2: number, y2: number, width = 0.5, gray = 0): this {
    this.ops.push(`${num(gray)} G ${num(width)} w ${num(x1)} ${num(y1)} m ${num(x2)} ${num(y2)} l S`);
    return this;
  }

  rect(x: number, y: number, width: number, height: number, gray: number): this {
    this.ops.push(`${num(gray)} g ${num(x)} ${num(y)} ${num(width)} ${num(height)} re f 0 g`);
    return this;
  }

  /** Draws the document's image (`setImage`) in the box. */
  image(x: number, y: number, width: number, height: number): this {
    this.ops.push(`q ${num(width)} 0 0 ${num(height)} ${num(x)} ${num(y)} cm /Im1 Do Q`);
    return this;
  }
}

const encoder = new TextEncoder();

/** One-byte-per-char strings (WinAnsi text, binary) as bytes. */
function bytesOf(s: string): Uint8Array {
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i) & 0xff;
  return out;
}

export class PdfDocument {
  readonly pages: PdfPage[] = [];
  private image: PdfImage | undefined;

  constructor(private readonly info: { title?: string; producer?: string } = {}) {}

  addPage(): PdfPage {
    const page = new PdfPage();
    this.pages.push(page);
    return page;
  }

  setImage(image: PdfImage): void {
    this.image = image;
  }

  /** The file: header, objects, xref table, trailer. */
  toBytes(): Uint8Array<ArrayBuffer> {
    const chunks: Uint8Array[] = [];
    const offsets: number[] = [];
    let size = 0;
    const push = (b: Uint8Array) => {
      chunks.push(b);
      size += b.length;
    };
    const object = (id: number, body: string, stream?: Uint8Array) => {
      offsets[id] = size;
      push(bytesOf(`${id} 0 obj\n${body}\n`));
      if (stream) {
        push(encoder.encode("stream\n"));
        push(stream);
        push(encoder.encode("\nendstream\n"));
      }
      push(encoder.encode("endobj\n"));
    };
    push(bytesOf("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n"));
    const font = (base: string) => `<< /Type /Font /Subtype /Type1 /BaseFont /${base} /Encoding /WinAnsiEncoding >>`;
    const image = this.image;
    // Objects 6 (the image) and 7 (its soft mask) when there are; the pages follow.
    const first = 6 + (image ? 1 : 0) + (image?.alpha ? 1 : 0);
    const kids = this.pages.map((_, i) => `${first + i * 2} 0 R`).join(" ");
    object(1, "<< /Type /Catalog /Pages 2 0 R >>");
    object(2, `<< /Type /Pages /Kids [${kids}] /Count ${this.pages.length} >>`);
    object(3, font("Helvetica"));
    object(4, font("Helvetica-Bold"));
    object(
      5,
      `<< /Producer ${literal(this.info.producer ?? "school-api")} /Title ${literal(this.info.title ?? "")} >>`,
    );
    if (image) {
      const size = `/Type /XObject /Subtype /Image /Width ${image.width} /Height ${image.height}`;
      const mask = image.alpha ? " /SMask 7 0 R" : "";
      object(6, `<< ${size} ${image.dict}${mask} /Length ${image.stream.length} >>`, image.stream);
      if (image.alpha) {
        object(
          7,
          `<< ${size} /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode /Length ${image.alpha.length} >>`,
          image.alpha,
        );
      }
    }
    const xobject = image ? " /XObject << /Im1 6 0 R >>" : "";
    this.pages.forEach((page, i) => {
      const id = first + i * 2;
      // Level 1: content streams of short text lines compress nearly as well, in a third of the CPU.
      const content = zlibSync(bytesOf(page.ops.join("\n")), { level: 1 });
      object(
        id,
        `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${A4.width} ${A4.height}] /Resources << /Font << /F1 3 0 R /F2 4 0 R >>${xobject} >> /Contents ${id + 1} 0 R >>`,
      );
      object(id + 1, `<< /Length ${content.length} /Filter /FlateDecode >>`, content);
    });
    const count = first + this.pages.length * 2;
    const xref = size;
    let table = `xref\n0 ${count}\n0000000000 65535 f \n`;
    for (let id = 1; id < count; id++) table += `${String(offsets[id] ?? 0).padStart(10, "0")} 00000 n \n`;
    push(bytesOf(`${table}trailer\n<< /Size ${count} /Root 1 0 R /Info 5 0 R >>\nstartxref\n${xref}\n%%EOF\n`));
    const out = new Uint8Array(size);
    let at = 0;
    for (const c of chunks) {
      out.set(c, at);
      at += c.length;
    }
    return out;
  }
}
