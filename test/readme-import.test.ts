/**
 * The README's "Import a spreadsheet" walk-through, step by step as a school does it, on the sample
 * file the repository keeps (docs/samples/teachers.xlsx, made by scripts/samples.ts): the template,
 * a signed upload to the development S3 endpoint, the start, the progress, the per-row errors. What
 * the README shows the process answering is what this test gets.
 */
import { createExecutionContext, createMessageBatch, env, getQueueResult } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../src/index";
import { readXlsx, XLSX_TYPE } from "../src/lib/xlsx";
import { DEMO, makeTestApp, recordingBulkQueue } from "./helpers";

const sample = Uint8Array.from(atob(env.TEST_SAMPLE_TEACHERS), (c) => c.charCodeAt(0));

describe("the README's import walk-through", () => {
  it("template, signed upload, start, progress and per-row errors, on docs/samples/teachers.xlsx", async () => {
    const { sent, queue: bulk } = recordingBulkQueue();
    const t = makeTestApp({ queues: { bulk } });
    // ACCESS_TOKEN=$(npm run -s token -- +15550000002): the school admin of school 1, signed in by code.
    const { accessToken } = await t.signIn(DEMO.northAdmin.phone);
    const auth = { token: accessToken, school: 1 };

    // 1. The template: the header row and one example row.
    const template = await t.request("/api/v1/bulk-process/template/teachers", auth);
    expect(template.status).toBe(200);
    expect(template.headers.get("content-type")).toBe(XLSX_TYPE);
    const [header] = readXlsx(new Uint8Array(await template.arrayBuffer()));
    // The sample is the template's columns, filled in.
    const [sampleHeader, ...rows] = readXlsx(sample);
    expect(sampleHeader).toEqual(header);
    expect(rows).toHaveLength(5);

    // 2. A signed upload URL for the file, and the upload (the dev server's S3 endpoint).
    const signed = await t.request("/api/v1/documents/documents/signed-url", {
      ...auth,
      method: "POST",
      body: { contentType: XLSX_TYPE, slug: "1/documents/teachers.xlsx", name: "Teachers", method: "PUT" },
    });
    expect(signed.status, await signed.clone().text()).toBe(200);
    const {
      id: documentId,
      url,
      headers,
    } = (await signed.json()) as {
      id: number;
      url: string;
      headers: Record<string, string>;
    };
    const put = await t.app.request(url, { method: "PUT", headers, body: sample }, env);
    expect(put.status, await put.clone().text()).toBe(200);

    // 3. Start the import: a bulk process, queued.
    const started = await t.request("/api/v1/teacher/upload-file", { ...auth, method: "POST", body: { documentId } });
    expect(started.status, await started.clone().text()).toBe(201);
    const process = (await started.json()) as { id: number; status: string; entity: string };
    expect(process).toMatchObject({ status: "queued", entity: "teachers" });

    // The bulk queue's consumer reads it (under `npm run dev`, within seconds).
    expect(sent).toEqual([{ bulkProcessId: process.id, schoolId: 1 }]);
    const batch = createMessageBatch("school-bulk", [
      { id: `readme-${process.id}`, body: sent[0], timestamp: new Date(), attempts: 1 },
    ]);
    const ctx = createExecutionContext();
    await (worker as ExportedHandler<Env>).queue?.(batch, env, ctx);
    expect((await getQueueResult(batch, ctx)).retryMessages).toEqual([]);

    // 4. Progress and per-row errors: three teachers imported, two rows refused, each named (row 1 is the header).
    const done = await t.request(`/api/v1/bulk-process/${process.id}`, auth);
    expect(done.status).toBe(200);
    expect(await done.json()).toMatchObject({
      status: "completed",
      totalRows: 5,
      processedRows: 3,
      errors: README_ERRORS,
    });
    const teachers = await t.request("/api/v1/teacher?pageSize=100&name=Quintero", auth);
    expect(((await teachers.json()) as { total: number }).total).toBe(1);
  });
});

/** The errors the README shows for the sample (README.md, "Import a spreadsheet"). */
const README_ERRORS = [
  { row: 4, column: "Phone", message: "Not a phone number with its country code (like +52 55 1234 5678)" },
  { row: 5, column: "Email", message: "Not an email address" },
];
