/**
 * Excel (.xlsx) files: a streaming writer and a small reader, both on fflate (no SheetJS/exceljs;
 * docs/performance.md gives the sizes).
 *
 * Writing, as a stream: an .xlsx is a zip of a few XML parts, so rows are turned
 * into `<row>` XML and deflated by fflate's streaming zip as they come, and the response starts
 * before the last row is read. Strings are inline (no shared-string table to hold in memory);
 * numbers are numbers; null is an empty cell. One sheet per file.
 *
 * @example
 * return xlsxResponse("teachers.xlsx", { name: "Teachers", columns: ["Id", "Name"], rows: pages() });
 */
import { type UnzipFileInfo, unzipSync, Zip, ZipDeflate } from "fflate";

export type Cell = string | number | boolean | null | undefined;

export interface Sheet {
  name: string;
  columns: readonly string[];
  /** Rows in order; an async iterable lets a caller read the database page by page. */
  rows: Iterable<readonly Cell[]> | AsyncIterable<readonly Cell[]>;
}

export const XLSX_TYPE = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet";

const XML = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const STATIC_PARTS = (sheetName: string): [string, string][] => [
  [
    "[Content_Types].xml",
    `${XML}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/></Types>`,
  ],
  [
    "_rels/.rels",
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  ],
  [
    "xl/workbook.xml",
    `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="${escapeXml(sheetName.slice(0, 31))}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
  ],
  [
    "xl/_rels/workbook.xml.rels",
    `${XML}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`,
  ],
  [
    // Style 1: the header row, bold.
    "xl/styles.xml",
    `${XML}<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts><fills count="1"><fill><patternFill patternType="none"/></fill></fills><borders count="1"><border/></borders><cellStyleXfs count="1"><xf/></cellStyleXfs><cellXfs count="2"><xf fontId="0"/><xf fontId="1" applyFont="1"/></cellXfs></styleSheet>`,
  ],
];

/** Characters XML 1.0 cannot carry at all are dropped; markup characters are escaped. */
function escapeXml(s: string): string {
  return (
    s
      // biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters XML cannot carry
      .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
      .replace(/&/g, "&amp;")
      .replace(/</g, "&lt;")
      .replace(/>/g, "&gt;")
      .replace(/"/g, "&quot;")
  );
}

/** The column letters of a 0-based index: 0 -> A, 25 -> Z, 26 -> AA. */
export function columnName(index: number): string {
  let name = "";
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26)) name = String.fromCharCode(65 + ((n - 1) % 26)) + name;
  return name;
}

function cellXml(value: Cell, ref: string, style = ""): string {
  if (value === null || value === undefined || value === "") return "";
  if (typeof value === "number" && Number.isFinite(value)) return `<c r="${ref}"${style}><v>${value}</v></c>`;
  if (typeof value === "boolean") return `<c r="${ref}"${style} t="b"><v>${value ? 1 : 0}</v></c>`;
  const text = escapeXml(String(value));
  const space = /^\s|\s$/.test(text) ? ' xml:space="preserve"' : "";
  return `<c r="${ref}"${style} t="inlineStr"><is><t${space}>${text}</t></is></c>`;
}

function rowXml(cells: readonly Cell[], index: number, style = ""): string {
  const r = index + 1;
  return `<row r="${r}">${cells.map((v, i) => cellXml(v, `${columnName(i)}${r}`, style)).join("")}</row>`;
}

/** The .xlsx bytes as a stream: the static parts, then the sheet, deflated as its rows arrive. */
export function xlsxStream(sheet: Sheet): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let zip: Zip;
  let data: ZipDeflate;
  let rows: AsyncIterator<readonly Cell[]> | Iterator<readonly Cell[]>;
  let index = 0;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      zip = new Zip((err, chunk, final) => {
        if (err) controller.error(err);
        else {
          if (chunk.length > 0) controller.enqueue(chunk);
          if (final) controller.close();
        }
      });
      for (const [name, xml] of STATIC_PARTS(sheet.name)) {
        const part = new ZipDeflate(name, { level: 6 });
        zip.add(part);
        part.push(encoder.encode(xml), true);
      }
      data = new ZipDeflate("xl/worksheets/sheet1.xml", { level: 6 });
      zip.add(data);
      const cols = sheet.columns.map((_, i) => `<col min="${i + 1}" max="${i + 1}" width="20" customWidth="1"/>`);
      data.push(
        encoder.encode(
          `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><cols>${cols.join("")}</cols><sheetData>${rowXml(sheet.columns, index++, ' s="1"')}`,
        ),
      );
      const source = sheet.rows;
      rows = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
    },
    async pull() {
      // About a thousand rows per pull: large enough to deflate well, small enough to stream.
      let xml = "";
      for (let n = 0; n < 1000; n++) {
        const next = await rows.next();
        if (next.done) {
          data.push(encoder.encode(`${xml}</sheetData></worksheet>`), true);
          zip.end();
          return;
        }
        xml += rowXml(next.value, index++);
      }
      data.push(encoder.encode(xml));
    },
  });
}

/** A download response: the stream, its type, and a file name the browser keeps. */
export function xlsxResponse(filename: string, sheet: Sheet): Response {
  return new Response(xlsxStream(sheet), {
    headers: {
      "content-type": XLSX_TYPE,
      "content-disposition": `attachment; filename="${filename.replace(/[^\w.-]/g, "_")}"`,
      "cache-control": "no-store",
    },
  });
}

// ---------------------------------------------------------------------------------------------
// Reading

/** A file the reader refuses: not an .xlsx, too large, too many rows. The message is for the user. */
export class XlsxError extends Error {
  override name = "XlsxError";
}

export interface ReadLimits {
  /** The .xlsx itself (compressed). Default 5 MB. */
  maxBytes?: number;
  /** The worksheet's XML once inflated (a zip bomb stops here). Default 40 MB. */
  maxSheetBytes?: number;
  /** Rows after the header. Default 10,000. */
  maxRows?: number;
}

export const READ_LIMITS = { maxBytes: 5 * 1024 * 1024, maxSheetBytes: 40 * 1024 * 1024, maxRows: 10_000 };

/** One worksheet row: its spreadsheet number (1 is the first) and its cells by column (gaps are null). */
export interface SheetRow {
  row: number;
  cells: Cell[];
}

const ENTITY: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** XML text to a string: entities, character references and OOXML's `_xHHHH_` escapes. */
function unescapeXml(s: string): string {
  return s
    .replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(\w+));/g, (m, hex, dec, name) =>
      hex ? String.fromCodePoint(parseInt(hex, 16)) : dec ? String.fromCodePoint(Number(dec)) : (ENTITY[name] ?? m),
    )
    .replace(/_x([0-9a-fA-F]{4})_/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

/** The text of a string item (`<si>` or `<is>`): every `<t>` run, phonetic runs (`<rPh>`) left out. */
function itemText(xml: string): string {
  let text = "";
  for (const m of xml.replace(/<rPh\b[\s\S]*?<\/rPh>/g, "").matchAll(/<t(?:\s[^>]*)?>([\s\S]*?)<\/t>/g)) {
    text += m[1];
  }
  return unescapeXml(text);
}

const ATTRS: Record<string, RegExp> = {};
/** An attribute's value in a tag's attribute text (the patterns are made once per name). */
const attr = (tag: string, name: string) => {
  ATTRS[name] ??= new RegExp(`\\s${name}="([^"]*)"`);
  return ATTRS[name].exec(tag)?.[1];
};

/** A column's 0-based index from a cell reference: A1 -> 0, AA7 -> 26. */
export function columnIndex(ref: string): number {
  let n = 0;
  for (const ch of ref) {
    const c = ch.charCodeAt(0);
    if (c < 65 || c > 90) break;
    n = n * 26 + (c - 64);
  }
  return n - 1;
}

function cellValue(type: string | undefined, inner: string, shared: string[]): Cell {
  if (type === "inlineStr") return itemText(inner);
  const v = /<v>([\s\S]*?)<\/v>/.exec(inner)?.[1];
  if (v === undefined) return null;
  switch (type) {
    case "s":
      return shared[Number(v)] ?? null;
    case "b":
      return v === "1";
    case "str": // a formula's text result
    case "e": // an error value: #N/A, #REF!
    case "d": // an ISO 8601 date (rare: Excel writes dates as serial numbers)
      return unescapeXml(v);
    default: {
      const n = Number(v);
      return Number.isFinite(n) ? n : unescapeXml(v);
    }
  }
}

/** Where the first worksheet lives: workbook.xml's first `<sheet>`, through the workbook's relationships. */
function firstSheetPath(files: Record<string, Uint8Array>): string {
  const decoder = new TextDecoder();
  const workbook = files["xl/workbook.xml"];
  const rels = files["xl/_rels/workbook.xml.rels"];
  if (workbook && rels) {
    const sheet = /<(?:\w+:)?sheet\s[^>]*>/.exec(decoder.decode(workbook))?.[0];
    const id = sheet && /\s(?:\w+:)?id="([^"]*)"/.exec(sheet)?.[1];
    for (const m of decoder.decode(rels).matchAll(/<Relationship\s[^>]*>/g)) {
      if (attr(m[0], "Id") !== id) continue;
      const target = attr(m[0], "Target") ?? "";
      return target.startsWith("/") ? target.slice(1) : `xl/${target.replace(/^\.\//, "")}`;
    }
  }
  return "xl/worksheets/sheet1.xml";
}

const unzip = (bytes: Uint8Array, keep: (file: UnzipFileInfo) => boolean) => {
  try {
    return unzipSync(bytes, { filter: keep });
  } catch (err) {
    if (err instanceof XlsxError) throw err;
    throw new XlsxError("The file is not an .xlsx workbook (it could not be unzipped)");
  }
};

/**
 * The rows of the first worksheet of an .xlsx, in order, as they are parsed. Strings (shared,
 * inline, rich text) are strings, numbers numbers (dates stay Excel serials: `excelDate` converts
 * one), booleans booleans; a cell missing between two others is null. Rows Excel left out (all
 * empty) are not yielded: `row` keeps the spreadsheet's numbering.
 *
 * The sheet is inflated whole (bounded by `maxSheetBytes`) and read 1 MB of text at a time, so the
 * rows are never all held as strings at once. Throws `XlsxError` for a file it refuses.
 */
export function* xlsxRows(bytes: Uint8Array, limits: ReadLimits = {}): Generator<SheetRow> {
  const { maxBytes, maxSheetBytes, maxRows } = { ...READ_LIMITS, ...limits };
  if (bytes.length > maxBytes) {
    throw new XlsxError(`The file is ${(bytes.length / 1048576).toFixed(1)} MB; at most ${maxBytes / 1048576} MB`);
  }
  const meta = unzip(bytes, (f) => /^xl\/(workbook\.xml|_rels\/workbook\.xml\.rels|sharedStrings\.xml)$/.test(f.name));
  const path = firstSheetPath(meta);
  const sheets = unzip(bytes, (f) => {
    if (f.name !== path) return false;
    if (f.originalSize > maxSheetBytes) throw new XlsxError(`The worksheet is too large to import`);
    return true;
  });
  const sheet = sheets[path];
  if (!sheet) throw new XlsxError("The workbook has no worksheet");
  const decoder = new TextDecoder();
  const shared: string[] = [];
  const sst = meta["xl/sharedStrings.xml"];
  if (sst)
    for (const m of decoder.decode(sst).matchAll(/<si>([\s\S]*?)<\/si>|<si\/>/g)) shared.push(itemText(m[1] ?? ""));
  delete meta["xl/sharedStrings.xml"];

  const CHUNK = 1 << 20;
  const stream = new TextDecoder();
  let text = "";
  let count = 0;
  let last = 0;
  const rowPattern = /<row\b([^>]*?)(?:\/>|>([\s\S]*?)<\/row>)/g;
  for (let at = 0; at < sheet.length || text.length > 0; ) {
    const end = Math.min(at + CHUNK, sheet.length);
    const done = end >= sheet.length;
    if (at < sheet.length) text += stream.decode(sheet.subarray(at, end), { stream: !done });
    at = end;
    // Only whole rows: what follows the last `</row>` waits for the next chunk.
    const cut = done ? text.length : text.lastIndexOf("</row>") + 6;
    if (cut < 6 && !done) continue;
    const part = text.slice(0, cut);
    text = text.slice(cut);
    rowPattern.lastIndex = 0;
    for (const m of part.matchAll(rowPattern)) {
      const r = Number(attr(m[1] ?? "", "r")) || last + 1;
      last = r;
      const cells: Cell[] = [];
      let next = 0;
      for (const c of (m[2] ?? "").matchAll(/<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g)) {
        const ref = attr(c[1] ?? "", "r");
        const index = ref ? columnIndex(ref) : next;
        next = index + 1;
        const value = cellValue(attr(c[1] ?? "", "t"), c[2] ?? "", shared);
        while (cells.length < index) cells.push(null);
        cells[index] = value;
      }
      while (cells.length > 0 && (cells.at(-1) === null || cells.at(-1) === "")) cells.pop();
      if (cells.length === 0) continue;
      if (++count > maxRows + 1)
        throw new XlsxError(`The sheet has more than ${maxRows} rows; split it into files of at most ${maxRows}`);
      yield { row: r, cells };
    }
    if (done) break;
  }
}

/** Every row of the first worksheet (see `xlsxRows`), as an array indexed by row number - 1. */
export function readXlsx(bytes: Uint8Array, limits?: ReadLimits): Cell[][] {
  const rows: Cell[][] = [];
  for (const { row, cells } of xlsxRows(bytes, limits)) {
    while (rows.length < row - 1) rows.push([]);
    rows[row - 1] = cells;
  }
  return rows;
}

/** An Excel date serial (days since 1899-12-30, the 1900 leap-year bug included) as YYYY-MM-DD. */
export function excelDate(serial: number): string {
  return new Date(Math.round((serial - 25569) * 86400) * 1000).toISOString().slice(0, 10);
}
