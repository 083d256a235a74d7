/**
 * Excel (.xlsx) files: a streaming writer and a small reader, both on fflate (no SheetJS/exceljs;
 * docs/performance.md gives the sizes).
 *
 * Writing, as a stream: an .xlsx is a zip of a few XML parts, so rows are turned
 * into `<row>` XML and deflated by fflate's streaming zip as they come, and the response starts
 * before the last row is read. Strings are inline (no shared-string table to hold in memory);
 * numbers are numbers; null is an empty cell. One sheet per file. The file's name, the sheet's name,
 * its header row and any cell that is a message are written in the language of the request
 * (src/lib/message.ts), the rows read in that language's scope.
 *
 * @example
 * return xlsxResponse(m`teachers.xlsx`, { name: m`Teachers`, columns: [m`Id`, m`Name`], rows: pages() });
 */
import { Zip, ZipDeflate } from "fflate";
import { currentLanguage, type Language, withLanguage } from "./language";
import { amount, Message, m } from "./message";
import { readEntry, type ZipEntry, ZipError, zipEntries } from "./unzip";

/** A cell the reader reads. */
export type ReadCell = string | number | boolean | null | undefined;
/** A cell the writer writes: a value, or a message written in the request's language. */
export type Cell = ReadCell | Message;

export interface Sheet {
  name: Message;
  columns: readonly Message[];
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

/** A row's messages written out in `language`. */
const cellsIn = (cells: readonly Cell[], language: Language) =>
  cells.map((c) => (c instanceof Message ? c.render(language) : c));

/** The .xlsx bytes as a stream: the static parts, then the sheet, deflated as its rows arrive. */
export function xlsxStream(sheet: Sheet, language: Language = currentLanguage()): ReadableStream<Uint8Array> {
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
      for (const [name, xml] of STATIC_PARTS(sheet.name.render(language))) {
        const part = new ZipDeflate(name, { level: 6 });
        zip.add(part);
        part.push(encoder.encode(xml), true);
      }
      data = new ZipDeflate("xl/worksheets/sheet1.xml", { level: 6 });
      zip.add(data);
      const cols = sheet.columns.map((_, i) => `<col min="${i + 1}" max="${i + 1}" width="20" customWidth="1"/>`);
      data.push(
        encoder.encode(
          `${XML}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><cols>${cols.join("")}</cols><sheetData>${rowXml(cellsIn(sheet.columns, language), index++, ' s="1"')}`,
        ),
      );
      const source = sheet.rows;
      rows = Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
    },
    async pull() {
      // About a thousand rows per pull: large enough to deflate well, small enough to stream.
      let xml = "";
      for (let n = 0; n < 1000; n++) {
        // The stream is pulled outside the request's scope: its rows are read (and their messages
        // written) in the language the request chose.
        const next = await withLanguage(language, () => rows.next());
        if (next.done) {
          data.push(encoder.encode(`${xml}</sheetData></worksheet>`), true);
          zip.end();
          return;
        }
        xml += rowXml(cellsIn(next.value, language), index++);
      }
      data.push(encoder.encode(xml));
    },
  });
}

/** A download response: the stream, its type, and a file name the browser keeps. */
export function xlsxResponse(filename: Message, sheet: Sheet): Response {
  const language = currentLanguage();
  return new Response(xlsxStream(sheet, language), {
    headers: {
      "content-type": XLSX_TYPE,
      "content-disposition": attachment(filename.render(language)),
      "content-language": language,
      "cache-control": "no-store",
    },
  });
}

/** `content-disposition` of a download: an ASCII name, and the name itself (RFC 6266) when it is not ASCII. */
export function attachment(name: string): string {
  const ascii = name
    .normalize("NFD")
    .replace(/[\u0300-\u036f]/g, "")
    .replace(/[^\w.-]/g, "_");
  return ascii === name
    ? `attachment; filename="${ascii}"`
    : `attachment; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(name)}`;
}

// ---------------------------------------------------------------------------------------------
// Reading

/** A file the reader refuses: not an .xlsx, too large, too many rows. The message is for the user. */
export class XlsxError extends Error {
  override name = "XlsxError";
  // Private: an error compares by its name and message (English), as before it carried a message.
  readonly #text: Message;
  constructor(text: Message) {
    super(text.toString());
    this.#text = text;
  }
  /** The message, to write in the reader's language. */
  get text(): Message {
    return this.#text;
  }
}

export interface ReadLimits {
  /** The .xlsx itself (compressed). */
  maxBytes?: number;
  /** The worksheet's XML once unzipped (streamed: never held whole). */
  maxSheetBytes?: number;
  /** The shared-string table's XML once unzipped (its strings are held while the sheet is read). */
  maxSharedStringsBytes?: number;
  /** Any other part the reader reads once unzipped: the workbook and its relationships. */
  maxPartBytes?: number;
  /** Everything the reader unzips, each part counted once. */
  maxTotalBytes?: number;
  /** One row of the worksheet, or one shared string, as text: what is held while it is read. */
  maxElementChars?: number;
  /** Rows after the header. */
  maxRows?: number;
}

const MB = 1024 * 1024;

/**
 * What the reader reads at most: a Worker has 128 MB, and a 5 MB zip can say anything about its
 * parts and inflate to gigabytes. Sizes are counted on the real bytes as they come out of the
 * inflater (src/lib/unzip.ts), never taken from the zip's headers. The worksheet is streamed (one
 * row of text at a time, `maxElementChars`); the shared strings (≤ 16 MB of XML, at most ~32 MB as
 * strings) and the file (≤ 5 MB) are what is held. Ten thousand rows of a few dozen columns are a
 * few MB of XML, far under every limit; Excel's longest cell is 32,767 characters.
 */
export const READ_LIMITS = {
  maxBytes: 5 * MB,
  maxSheetBytes: 40 * MB,
  maxSharedStringsBytes: 16 * MB,
  maxPartBytes: 1 * MB,
  maxTotalBytes: 64 * MB,
  maxElementChars: 4 * MB,
  maxRows: 10_000,
} satisfies Required<ReadLimits>;

/** One worksheet row: its spreadsheet number (1 is the first) and its cells by column (gaps are null). */
export interface SheetRow {
  row: number;
  cells: ReadCell[];
}

const ENTITY: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

/** XML text to a string: entities, character references and OOXML's `_xHHHH_` escapes. */
function unescapeXml(s: string): string {
  return s
    .replace(/&(?:#x([0-9a-fA-F]+)|#(\d+)|(\w+));/g, (entity, hex, dec, name) =>
      hex
        ? String.fromCodePoint(parseInt(hex, 16))
        : dec
          ? String.fromCodePoint(Number(dec))
          : (ENTITY[name] ?? entity),
    )
    .replace(/_x([0-9a-fA-F]{4})_/g, (_, hex) => String.fromCharCode(parseInt(hex, 16)));
}

/** The text of a string item (`<si>` or `<is>`): every `<t>` run, phonetic runs (`<rPh>`) left out. */
function itemText(xml: string): string {
  let text = "";
  for (const match of xml.replace(/<rPh\b[\s\S]*?<\/rPh>/g, "").matchAll(/<t(?:\s[^>]*)?>([\s\S]*?)<\/t>/g)) {
    text += match[1];
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

function cellValue(type: string | undefined, inner: string, shared: string[]): ReadCell {
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
function firstSheetPath(workbook: string | undefined, rels: string | undefined): string {
  if (workbook !== undefined && rels !== undefined) {
    const sheet = /<(?:\w+:)?sheet\s[^>]*>/.exec(workbook)?.[0];
    const id = sheet && /\s(?:\w+:)?id="([^"]*)"/.exec(sheet)?.[1];
    for (const match of rels.matchAll(/<Relationship\s[^>]*>/g)) {
      if (attr(match[0], "Id") !== id) continue;
      const target = attr(match[0], "Target") ?? "";
      return target.startsWith("/") ? target.slice(1) : `xl/${target.replace(/^\.\//, "")}`;
    }
  }
  return "xl/worksheets/sheet1.xml";
}

const SHARED_STRINGS = "xl/sharedStrings.xml";

const tooLarge = (what: Message, limit: number) =>
  new XlsxError(
    limit % MB === 0
      ? m`${what} unzips to more than ${limit / MB} MB, the most an import reads: split the file`
      : m`${what} unzips to more than ${limit} bytes, the most an import reads: split the file`,
  );

/**
 * The parts of an .xlsx, each read through `readEntry`: bounded by its own limit and, all parts
 * together (each counted once), by `maxTotalBytes`.
 */
function openXlsx(bytes: Uint8Array, limits: Required<ReadLimits>) {
  const parts = new Map<string, ZipEntry>();
  for (const entry of zipEntries(bytes)) if (!parts.has(entry.name)) parts.set(entry.name, entry);
  const counted = new Map<string, number>();
  let total = 0;
  /** The unzipped bytes of part `name`, in chunks; nothing if the file has no such part. */
  function* read(name: string, limit: number, what: Message): Generator<Uint8Array> {
    const entry = parts.get(name);
    if (!entry) return;
    const before = counted.get(name);
    const room = before === undefined ? limits.maxTotalBytes - total : before;
    const bound = Math.min(limit, room);
    let size = 0;
    for (const chunk of readEntry(bytes, entry, bound, () =>
      room < limit ? tooLarge(m`The workbook`, limits.maxTotalBytes) : tooLarge(what, limit),
    )) {
      size += chunk.length;
      yield chunk;
    }
    if (before === undefined) {
      counted.set(name, size);
      total += size;
    }
  }
  /** A small part as text. */
  const text = (name: string) => {
    if (!parts.has(name)) return undefined;
    const decoder = new TextDecoder();
    let out = "";
    for (const chunk of read(name, limits.maxPartBytes, m`The part ${name}`))
      out += decoder.decode(chunk, { stream: true });
    return out + decoder.decode();
  };
  return { has: (name: string) => parts.has(name), read, text };
}

/**
 * Scans XML text as it is decoded from `chunks` for whole elements matched by `pattern` (global),
 * handing each match to `each`. What follows the last whole element is kept only from where the
 * next one (`opening`) starts, so text that is no element of interest is never accumulated, and an
 * element longer than `max` characters is refused (`tooLong`), as soon as it is that long.
 */
function* scan<T>(
  chunks: Iterable<Uint8Array>,
  pattern: RegExp,
  opening: RegExp,
  each: (m: RegExpMatchArray) => T | undefined,
  max: number,
  tooLong: Message,
): Generator<T> {
  const decoder = new TextDecoder();
  let text = "";
  const drain = function* (done: boolean): Generator<T> {
    let end = 0;
    for (const match of text.matchAll(pattern)) {
      if (match[0].length > max) throw new XlsxError(tooLong);
      const out = each(match);
      if (out !== undefined) yield out;
      end = (match.index ?? 0) + match[0].length;
    }
    const rest = text.slice(end);
    const next = rest.search(opening);
    // Eight characters: an opening tag split between two chunks.
    text = done ? "" : next < 0 ? rest.slice(-8) : rest.slice(next);
  };
  for (const chunk of chunks) {
    text += decoder.decode(chunk, { stream: true });
    yield* drain(false);
    if (text.length > max) throw new XlsxError(tooLong);
  }
  text += decoder.decode();
  yield* drain(true);
}

const tooLong = (what: Message, max: number) =>
  m`${what} is longer than ${amount(max)} characters: the file cannot be imported`;

/** The shared-string table: each `<si>`'s text, in order. */
function sharedStrings(chunks: Iterable<Uint8Array>, max: number): string[] {
  const what = m`A string of the shared-string table (${SHARED_STRINGS})`;
  return [
    ...scan(
      chunks,
      /<si>([\s\S]*?)<\/si>|<si\/>/g,
      /<si[\s>/]/,
      (match) => itemText(match[1] ?? ""),
      max,
      tooLong(what, max),
    ),
  ];
}

const ROW = /<row\b([^>]*?)(?:\/>|>([\s\S]*?)<\/row>)/g;
const CELL = /<c\b([^>]*?)(?:\/>|>([\s\S]*?)<\/c>)/g;

/** The `<row>` elements of a worksheet's XML, in order: attributes in [1], content in [2]. */
const rowElements = (chunks: Iterable<Uint8Array>, max: number) =>
  scan(chunks, ROW, /<row[\s>/]/, (match) => match, max, tooLong(m`A row of the worksheet`, max));

/** Whether a row's XML has a cell with a value (a row `sheetRows` yields), cheaper than reading it. */
function hasValue(xml: string, shared: string[]): boolean {
  for (const c of xml.matchAll(CELL)) {
    const value = cellValue(attr(c[1] ?? "", "t"), c[2] ?? "", shared);
    if (value !== null && value !== "") return true;
  }
  return false;
}

/** The rows of a worksheet's XML with a value, in order (see `xlsxRows`). */
function* sheetRows(chunks: Iterable<Uint8Array>, shared: string[], max: number): Generator<SheetRow> {
  let last = 0;
  for (const match of rowElements(chunks, max)) {
    const r = Number(attr(match[1] ?? "", "r")) || last + 1;
    last = r;
    const cells: ReadCell[] = [];
    let next = 0;
    for (const c of (match[2] ?? "").matchAll(CELL)) {
      const ref = attr(c[1] ?? "", "r");
      const index = ref ? columnIndex(ref) : next;
      next = index + 1;
      const value = cellValue(attr(c[1] ?? "", "t"), c[2] ?? "", shared);
      while (cells.length < index) cells.push(null);
      cells[index] = value;
    }
    while (cells.length > 0 && (cells.at(-1) === null || cells.at(-1) === "")) cells.pop();
    if (cells.length > 0) yield { row: r, cells };
  }
}

/**
 * The rows of the first worksheet of an .xlsx, in order, as they are parsed. Strings (shared,
 * inline, rich text) are strings, numbers numbers (dates stay Excel serials: `excelDate` converts
 * one), booleans booleans; a cell missing between two others is null. Rows Excel left out (all
 * empty) are not yielded: `row` keeps the spreadsheet's numbering.
 *
 * Every part read is bounded by its real unzipped size (`READ_LIMITS`, or `limits`). The worksheet
 * is unzipped twice, as a stream, never held whole: first to check it (its size and CRC-32 against
 * its headers) and count its rows, then to yield them. So a damaged file, or one over `maxRows`,
 * fails before the first row is yielded, and a caller that writes as it reads writes all or
 * nothing of a file. Throws `XlsxError` for a file it refuses.
 */
export function* xlsxRows(bytes: Uint8Array, limits: ReadLimits = {}): Generator<SheetRow> {
  try {
    yield* readRows(bytes, { ...READ_LIMITS, ...limits });
  } catch (err) {
    throw err instanceof ZipError ? new XlsxError(err.text) : err;
  }
}

function* readRows(bytes: Uint8Array, limits: Required<ReadLimits>): Generator<SheetRow> {
  const { maxBytes, maxRows } = limits;
  if (bytes.length > maxBytes) {
    throw new XlsxError(m`The file is ${(bytes.length / MB).toFixed(1)} MB; at most ${maxBytes / MB} MB`);
  }
  const xlsx = openXlsx(bytes, limits);
  const path = firstSheetPath(xlsx.text("xl/workbook.xml"), xlsx.text("xl/_rels/workbook.xml.rels"));
  if (!xlsx.has(path)) throw new XlsxError(m`The workbook has no worksheet`);
  const shared = sharedStrings(
    xlsx.read(SHARED_STRINGS, limits.maxSharedStringsBytes, m`The shared-string table (${SHARED_STRINGS})`),
    limits.maxElementChars,
  );
  const sheet = () => xlsx.read(path, limits.maxSheetBytes, m`The worksheet (${path})`);
  let count = 0;
  for (const match of rowElements(sheet(), limits.maxElementChars)) {
    if (hasValue(match[2] ?? "", shared) && ++count > maxRows + 1) {
      throw new XlsxError(m`The sheet has more than ${maxRows} rows; split it into files of at most ${maxRows}`);
    }
  }
  yield* sheetRows(sheet(), shared, limits.maxElementChars);
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
