import type { SchoolCtx } from "../../lib/context";
/**
 * The final lists as a PDF: one section per route (a new page each), the school's name (and its
 * logo, a JPEG or a PNG; another format is left out) on every page, the date as the school writes
 * it, stop times school-local, each student's status and who may receive them, page numbers. Its
 * texts, and the way it writes dates, are those of the request's language. Every cell wraps within
 * its column (a row is as tall as its longest cell): no name is cut, whatever its script
 * (src/lib/pdf.ts picks the fonts).
 */

import { currentLanguage, type Language } from "../../lib/language";
import { type Message, m } from "../../lib/message";
import { A4, PdfDocument, type PdfPage, type Weight } from "../../lib/pdf";
import { attachment } from "../../lib/xlsx";
import type { School } from "../school-schedule/api";
import type { FinalList, ListStudent } from "./final-list";

const MARGIN = 40;
/** A one-line row, baseline to baseline. */
const ROW = 14;
/** Baseline to baseline between the lines of a cell that wraps. */
const LEADING = 11;
const SIZE = 9;
/** Between a column's left edge and its text, and its text and the next column. */
const PAD = 2;
/** Columns: x offset and width. */
const COLUMNS = {
  time: { x: MARGIN, width: 34 },
  stop: { x: MARGIN + 34, width: 104 },
  student: { x: MARGIN + 138, width: 128 },
  status: { x: MARGIN + 266, width: 88 },
  receivers: { x: MARGIN + 354, width: A4.width - MARGIN - (MARGIN + 354) },
};

const KEYS = ["time", "stop", "student", "status", "receivers"] as const;
type Key = (typeof KEYS)[number];
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
const localNow = (ctx: SchoolCtx, timeZone: string, language: Language) =>
  new Intl.DateTimeFormat(LOCALES[language], { dateStyle: "medium", timeStyle: "short", timeZone }).format(
    ctx.deps.clock.now(),
  );

/** The school's logo file (from object storage); the document embeds it when it is a JPEG or a PNG. */
async function logoOf(ctx: SchoolCtx, school: School) {
  if (!school.logo) return undefined;
  try {
    const object = await ctx.deps.storage.get(school.logo);
    // A logo over 1 MiB is not a logo: left out rather than read.
    if (!object || object.size > 1024 * 1024) return undefined;
    return new Uint8Array(await new Response(object.body).arrayBuffer());
  } catch {
    // A logo that cannot be read leaves the list without it; the list matters more.
    return undefined;
  }
}

/** A student's cells as text (the receivers one name each). */
interface Texts {
  time: string;
  stop: string;
  student: string;
  status: string;
  receivers: string[];
}

/** The PDF of `lists` (an empty set prints one page saying so). */
export async function listsPdf(
  ctx: SchoolCtx,
  school: School,
  date: string,
  lists: readonly FinalList[],
  empty: Message,
) {
  const language = currentLanguage();
  const say = (message: Message) => message.render(language);
  const pdf = await PdfDocument.create(ctx.deps.assets, {
    title: say(m`Route lists ${date}`),
    at: ctx.deps.clock.now(),
  });
  const generated = say(m`Generated ${localNow(ctx, school.timeZone, language)}`);
  const heading = say(m`Final route lists · ${longDate(date, language)}`);
  const about = (list: FinalList) =>
    [
      list.cancelled ? m`CANCELLED by the school this day` : undefined,
      list.direction === "home" ? m`Home` : m`To school`,
      m`Vehicle ${list.vehicle}`,
      list.driverName ? m`Driver ${list.driverName}` : undefined,
      m`${list.riders} riders of ${list.seats} seats`,
      m`Version ${list.version}`,
    ]
      .flatMap((part) => (part ? [say(part)] : []))
      .join(" · ");
  const texts = (s: ListStudent): Texts => ({
    time: s.stopTime ?? "",
    stop: s.stopName ?? "",
    student: `${s.lastName}, ${s.firstName}`,
    status: s.reason ? `${say(STATUS[s.status])}: ${s.reason}` : say(STATUS[s.status]),
    receivers: (s.receivers ?? []).map((r) => r.name),
  });
  /** A student's name is bold when they do not ride as planned. */
  const nameWeight = (s: ListStudent): Weight => (s.status === "riding" ? "regular" : "bold");

  // The fonts beyond Latin that the texts need, in the weight each is drawn in, before any is measured.
  const bold = [school.name, ...lists.map((l) => l.routeName)];
  const regular = [generated, heading, say(empty)];
  for (const list of lists) {
    regular.push(about(list));
    for (const s of list.students) {
      const t = texts(s);
      (nameWeight(s) === "bold" ? bold : regular).push(t.student);
      regular.push(t.stop, t.status, ...t.receivers);
    }
  }
  await pdf.prepare(bold, "bold");
  await pdf.prepare(regular, "regular");
  const logoFile = await logoOf(ctx, school);
  const logo = logoFile && pdf.image(logoFile);

  /** Each receiver starts a line unless it fits after the one before; a long name wraps at its spaces. */
  const receiverLines = (names: string[], width: number) => {
    const lines: string[] = [];
    names.forEach((name, i) => {
      const text = i < names.length - 1 ? `${name},` : name;
      const last = lines.at(-1);
      if (last !== undefined && pdf.width(`${last} ${text}`, SIZE) <= width)
        lines[lines.length - 1] = `${last} ${text}`;
      else lines.push(...pdf.lines(text, width, SIZE));
    });
    return lines;
  };
  const cellsOf = (s: ListStudent): Record<Key, string[]> => {
    const t = texts(s);
    const wrap = (key: Exclude<Key, "receivers">, weight: Weight = "regular") =>
      pdf.lines(t[key], COLUMNS[key].width - 2 * PAD, SIZE, weight);
    return {
      time: wrap("time"),
      stop: wrap("stop"),
      student: wrap("student", nameWeight(s)),
      status: wrap("status"),
      receivers: receiverLines(t.receivers, COLUMNS.receivers.width - 2 * PAD),
    };
  };

  /** Draws `text` wrapped to `width` from baseline `y`; answers the baseline after it. */
  const paragraph = (
    page: PdfPage,
    x: number,
    y: number,
    text: string,
    style: { size: number; leading: number; weight?: Weight; gray?: number; width?: number },
  ) => {
    for (const line of pdf.lines(text, style.width ?? A4.width - MARGIN - x, style.size, style.weight)) {
      page.text(x, y, line, style);
      y -= style.leading;
    }
    return y;
  };

  const newPage = (): { page: PdfPage; y: number } => {
    const page = pdf.addPage();
    let x = MARGIN;
    const top = A4.height - MARGIN;
    if (logo) {
      const h = 32;
      const w = Math.min(96, (logo.width / logo.height) * h);
      page.image(logo, MARGIN, top - h + 4, w, h);
      x += w + 8;
    }
    const stamp = pdf.width(generated, 8);
    page.text(A4.width - MARGIN - stamp, top - 10, generated, { size: 8, gray: 0.4 });
    // The school's name wraps beside the logo, clear of the time stamp.
    const width = A4.width - MARGIN - stamp - 12 - x;
    const y = paragraph(page, x, top - 10, school.name, { size: 14, leading: 16, weight: "bold", width });
    page.text(x, y + 2, heading, { size: 9, gray: 0.3 });
    const rule = Math.min(y - 8, top - 34);
    page.line(MARGIN, rule, A4.width - MARGIN, rule, 0.75);
    return { page, y: rule - 18 };
  };

  const header = (page: PdfPage, y: number) => {
    page.rect(MARGIN, y - 4, A4.width - 2 * MARGIN, ROW, 0.9);
    for (const key of KEYS) page.text(COLUMNS[key].x + PAD, y, say(HEAD[key]), { size: SIZE, weight: "bold" });
    return y - ROW;
  };

  if (lists.length === 0) {
    paragraph(newPage().page, MARGIN, A4.height - MARGIN - 60, say(empty), { size: 11, leading: 14 });
  }
  for (const list of lists) {
    let { page, y } = newPage();
    y = paragraph(page, MARGIN, y, list.routeName, { size: 12, leading: 14, weight: "bold" });
    y = paragraph(page, MARGIN, y, about(list), { size: 9, leading: 11, gray: 0.25 });
    y = header(page, y - 7);
    if (list.students.length === 0) {
      paragraph(page, MARGIN + PAD, y, say(m`No students on this route today.`), { size: SIZE, leading: LEADING });
    }
    for (const s of list.students) {
      const cells = cellsOf(s);
      // Below the first line, what the longest cell adds.
      const extra = (Math.max(1, ...KEYS.map((k) => cells[k].length)) - 1) * LEADING;
      if (y - extra < MARGIN + ROW) {
        ({ page, y } = newPage());
        const title = say(m`${list.routeName} (continued)`);
        y = paragraph(page, MARGIN, y, title, { size: 10, leading: 12, weight: "bold" });
        y = header(page, y - 6);
      }
      for (const key of KEYS) {
        const weight = key === "student" ? nameWeight(s) : "regular";
        cells[key].forEach((line, i) => {
          page.text(COLUMNS[key].x + PAD, y - i * LEADING, line, { size: SIZE, weight });
        });
      }
      page.line(MARGIN, y - extra - 4, A4.width - MARGIN, y - extra - 4, 0.25, 0.75);
      y -= extra + ROW;
    }
  }
  const total = pdf.pages.length;
  pdf.pages.forEach((page, i) => {
    const label = say(m`Page ${i + 1} of ${total}`);
    page.text(A4.width - MARGIN - pdf.width(label, 8), MARGIN / 2, label, { size: 8, gray: 0.4 });
  });
  return pdf.toBytes();
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
