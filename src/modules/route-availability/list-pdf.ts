/**
 * The final lists as a PDF: one section per route (a new page each), the school's name (and its
 * logo, a JPEG or a PNG; another format is left out) on every page, the date as the school writes
 * it, stop times school-local, each student's status and who may receive them, page numbers.
 */

import type { Ctx } from "../../lib/context";
import { A4, fitText, PdfDocument, type PdfPage, readImage, textWidth } from "../../lib/pdf";
import type { School } from "../school-schedule/api";
import type { FinalList, ListStudent } from "./final-list";

const MARGIN = 40;
const ROW = 14;
const SIZE = 9;
/** Columns: x offset and width. */
const COLUMNS = {
  time: { x: MARGIN, width: 38 },
  stop: { x: MARGIN + 40, width: 118 },
  student: { x: MARGIN + 160, width: 140 },
  status: { x: MARGIN + 302, width: 90 },
  receivers: { x: MARGIN + 394, width: A4.width - MARGIN - (MARGIN + 394) },
};

const KEYS = ["time", "stop", "student", "status", "receivers"] as const;
const HEAD = { time: "Time", stop: "Stop", student: "Student", status: "Status", receivers: "May receive" };

const STATUS: Record<ListStudent["status"], string> = { riding: "Rides", away: "Away", joining: "Joins" };

/** The date as the school writes it: "Monday, 1 March 2027". */
export const longDate = (date: string) =>
  new Intl.DateTimeFormat("en-GB", { dateStyle: "full", timeZone: "UTC" }).format(new Date(`${date}T00:00:00Z`));

/** Now, on the school's clocks: "1 Mar 2027, 07:15". */
const localNow = (ctx: Ctx, timeZone: string) =>
  new Intl.DateTimeFormat("en-GB", { dateStyle: "medium", timeStyle: "short", timeZone }).format(ctx.deps.clock.now());

/** The school's logo, when it is a JPEG or a PNG this can draw (read from object storage). */
async function logoOf(ctx: Ctx, school: School) {
  if (!school.logo) return undefined;
  try {
    const object = await ctx.deps.storage.get(school.logo);
    // A logo over 1 MiB is not a logo: left out rather than read.
    if (!object || object.size > 1024 * 1024) return undefined;
    return readImage(new Uint8Array(await new Response(object.body).arrayBuffer()));
  } catch {
    // A logo that cannot be read leaves the list without it; the list matters more.
    return undefined;
  }
}

/** The PDF of `lists` (an empty set prints one page saying so). */
export async function listsPdf(ctx: Ctx, school: School, date: string, lists: readonly FinalList[], empty: string) {
  const doc = new PdfDocument({ title: `Route lists ${date}` });
  const logo = await logoOf(ctx, school);
  if (logo) doc.setImage(logo);
  const generated = `Generated ${localNow(ctx, school.timeZone)}`;
  const heading = longDate(date);

  const newPage = (): { page: PdfPage; y: number } => {
    const page = doc.addPage();
    let x = MARGIN;
    const top = A4.height - MARGIN;
    if (logo) {
      const h = 32;
      const w = Math.min(96, (logo.width / logo.height) * h);
      page.image(MARGIN, top - h + 4, w, h);
      x += w + 8;
    }
    page.text(x, top - 10, fitText(school.name, A4.width - x - MARGIN - 150, 14, "bold"), { size: 14, font: "bold" });
    page.text(x, top - 24, `Final route lists · ${heading}`, { size: 9, gray: 0.3 });
    page.text(A4.width - MARGIN - textWidth(generated, 8), top - 10, generated, { size: 8, gray: 0.4 });
    page.line(MARGIN, top - 34, A4.width - MARGIN, top - 34, 0.75);
    return { page, y: top - 52 };
  };

  const header = (page: PdfPage, y: number) => {
    page.rect(MARGIN, y - 4, A4.width - 2 * MARGIN, ROW, 0.9);
    for (const key of KEYS) page.text(COLUMNS[key].x + 2, y, HEAD[key], { size: SIZE, font: "bold" });
    return y - ROW;
  };

  if (lists.length === 0) newPage().page.text(MARGIN, A4.height - MARGIN - 60, empty, { size: 11 });
  for (const list of lists) {
    let { page, y } = newPage();
    page.text(MARGIN, y, list.routeName, { size: 12, font: "bold" });
    y -= 14;
    const about = [
      list.direction === "home" ? "Home" : "To school",
      `Vehicle ${list.vehicle}`,
      list.driverName ? `Driver ${list.driverName}` : undefined,
      `${list.riders} riders of ${list.seats} seats`,
      `Version ${list.version}`,
    ].filter(Boolean);
    page.text(MARGIN, y, about.join(" · "), { size: 9, gray: 0.25 });
    y = header(page, y - 18);
    if (list.students.length === 0) page.text(MARGIN + 2, y, "No students on this route today.", { size: SIZE });
    for (const s of list.students) {
      if (y < MARGIN + ROW) {
        ({ page, y } = newPage());
        page.text(MARGIN, y, `${list.routeName} (continued)`, { size: 10, font: "bold" });
        y = header(page, y - 18);
      }
      const cell = (column: keyof typeof COLUMNS, text: string, font: "regular" | "bold" = "regular") =>
        page.text(COLUMNS[column].x + 2, y, fitText(text, COLUMNS[column].width - 4, SIZE, font), { size: SIZE, font });
      cell("time", s.stopTime ?? "");
      cell("stop", s.stopName ?? "");
      cell("student", `${s.lastName}, ${s.firstName}`, s.status === "riding" ? "regular" : "bold");
      cell("status", s.reason ? `${STATUS[s.status]}: ${s.reason}` : STATUS[s.status]);
      cell("receivers", (s.receivers ?? []).map((r) => r.name).join(", "));
      page.line(MARGIN, y - 4, A4.width - MARGIN, y - 4, 0.25, 0.75);
      y -= ROW;
    }
  }
  const total = doc.pages.length;
  doc.pages.forEach((page, i) => {
    const label = `Page ${i + 1} of ${total}`;
    page.text(A4.width - MARGIN - textWidth(label, 8), MARGIN / 2, label, { size: 8, gray: 0.4 });
  });
  return doc.toBytes();
}

/** A PDF download. */
export function pdfResponse(bytes: Uint8Array<ArrayBuffer>, filename: string): Response {
  return new Response(bytes, {
    headers: {
      "content-type": "application/pdf",
      "content-disposition": `attachment; filename="${filename.replace(/[^\w.-]/g, "_")}"`,
      "cache-control": "no-store",
    },
  });
}
