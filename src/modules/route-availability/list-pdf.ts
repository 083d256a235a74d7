/**
 * The final lists as a PDF: one section per route (a new page each), the school's name (and its
 * logo, a JPEG or a PNG; another format is left out) on every page, the date as the school writes
 * it, stop times school-local, each student's status and who may receive them, page numbers. Its
 * texts, and the way it writes dates, are those of the request's language.
 */

import type { Ctx } from "../../lib/context";
import { currentLanguage, type Language } from "../../lib/language";
import { type Message, m } from "../../lib/message";
import { A4, fitText, PdfDocument, type PdfPage, readImage, textWidth } from "../../lib/pdf";
import { attachment } from "../../lib/xlsx";
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
const HEAD = { time: m`Time`, stop: m`Stop`, student: m`Student`, status: m`Status`, receivers: m`May receive` };

const STATUS: Record<ListStudent["status"], Message> = { riding: m`Rides`, away: m`Away`, joining: m`Joins` };

/** How each language writes dates (Intl locales). */
const LOCALES: Record<Language, string> = { en: "en-GB", es: "es" };

/** The date as the school writes it: "Monday, 1 March 2027", "lunes, 1 de marzo de 2027". */
export const longDate = (date: string, language: Language = "en") =>
  new Intl.DateTimeFormat(LOCALES[language], { dateStyle: "full", timeZone: "UTC" }).format(
    new Date(`${date}T00:00:00Z`),
  );

/** Now, on the school's clocks: "1 Mar 2027, 07:15". */
const localNow = (ctx: Ctx, timeZone: string, language: Language) =>
  new Intl.DateTimeFormat(LOCALES[language], { dateStyle: "medium", timeStyle: "short", timeZone }).format(
    ctx.deps.clock.now(),
  );

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
export async function listsPdf(ctx: Ctx, school: School, date: string, lists: readonly FinalList[], empty: Message) {
  const language = currentLanguage();
  const say = (message: Message) => message.render(language);
  const doc = new PdfDocument({ title: say(m`Route lists ${date}`) });
  const logo = await logoOf(ctx, school);
  if (logo) doc.setImage(logo);
  const generated = say(m`Generated ${localNow(ctx, school.timeZone, language)}`);
  const heading = longDate(date, language);

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
    page.text(x, top - 24, say(m`Final route lists · ${heading}`), { size: 9, gray: 0.3 });
    page.text(A4.width - MARGIN - textWidth(generated, 8), top - 10, generated, { size: 8, gray: 0.4 });
    page.line(MARGIN, top - 34, A4.width - MARGIN, top - 34, 0.75);
    return { page, y: top - 52 };
  };

  const header = (page: PdfPage, y: number) => {
    page.rect(MARGIN, y - 4, A4.width - 2 * MARGIN, ROW, 0.9);
    for (const key of KEYS) page.text(COLUMNS[key].x + 2, y, say(HEAD[key]), { size: SIZE, font: "bold" });
    return y - ROW;
  };

  if (lists.length === 0) newPage().page.text(MARGIN, A4.height - MARGIN - 60, say(empty), { size: 11 });
  for (const list of lists) {
    let { page, y } = newPage();
    page.text(MARGIN, y, list.routeName, { size: 12, font: "bold" });
    y -= 14;
    const about = [
      list.direction === "home" ? m`Home` : m`To school`,
      m`Vehicle ${list.vehicle}`,
      list.driverName ? m`Driver ${list.driverName}` : undefined,
      m`${list.riders} riders of ${list.seats} seats`,
      m`Version ${list.version}`,
    ].flatMap((part) => (part ? [say(part)] : []));
    page.text(MARGIN, y, about.join(" · "), { size: 9, gray: 0.25 });
    y = header(page, y - 18);
    if (list.students.length === 0) page.text(MARGIN + 2, y, say(m`No students on this route today.`), { size: SIZE });
    for (const s of list.students) {
      if (y < MARGIN + ROW) {
        ({ page, y } = newPage());
        page.text(MARGIN, y, say(m`${list.routeName} (continued)`), { size: 10, font: "bold" });
        y = header(page, y - 18);
      }
      const cell = (column: keyof typeof COLUMNS, text: string, font: "regular" | "bold" = "regular") =>
        page.text(COLUMNS[column].x + 2, y, fitText(text, COLUMNS[column].width - 4, SIZE, font), { size: SIZE, font });
      cell("time", s.stopTime ?? "");
      cell("stop", s.stopName ?? "");
      cell("student", `${s.lastName}, ${s.firstName}`, s.status === "riding" ? "regular" : "bold");
      cell("status", s.reason ? `${say(STATUS[s.status])}: ${s.reason}` : say(STATUS[s.status]));
      cell("receivers", (s.receivers ?? []).map((r) => r.name).join(", "));
      page.line(MARGIN, y - 4, A4.width - MARGIN, y - 4, 0.25, 0.75);
      y -= ROW;
    }
  }
  const total = doc.pages.length;
  doc.pages.forEach((page, i) => {
    const label = say(m`Page ${i + 1} of ${total}`);
    page.text(A4.width - MARGIN - textWidth(label, 8), MARGIN / 2, label, { size: 8, gray: 0.4 });
  });
  return doc.toBytes();
}

/** A PDF download (its name in the request's language). */
export function pdfResponse(bytes: Uint8Array<ArrayBuffer>, filename: Message): Response {
  const language = currentLanguage();
  return new Response(bytes, {
    headers: {
      "content-type": "application/pdf",
      "content-disposition": attachment(filename.render(language)),
      "content-language": language,
      "cache-control": "no-store",
    },
  });
}
