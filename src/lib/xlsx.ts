/**
 * Excel (.xlsx) files, written as a stream: an .xlsx is a zip of a few XML parts, so rows are turned
 * into `<row>` XML and deflated by fflate's streaming zip as they come, and the response starts
 * before the last row is read. Strings are inline (no shared-string table to hold in memory);
 * numbers are numbers; null is an empty cell. One sheet per file.
 *
 * @example
 * return xlsxResponse("teachers.xlsx", { name: "Teachers", columns: ["Id", "Name"], rows: pages() });
 */
import { Zip, ZipDeflate } from "fflate";

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
    `${XML}<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="${escape(sheetName.slice(0, 31))}" sheetId="1" r:id="rId1"/></sheets></workbook>`,
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
function escape(s: string): string {
  return s
    .replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, "")
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;");
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
  const text = escape(String(value));
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
