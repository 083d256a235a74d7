/**
 * The code keeps its shape (scripts/architecture.ts reads it): one data layer writes every tenant
 * condition, modules meet only at their faces, src/lib depends on no module, no import cycle, no
 * `any`, few type assertions and each with its reason, no file too long to read.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  analyse,
  dataLayerFindings,
  dataLayerRules,
  type Finding,
  leftToConvert,
  MAX_LINES,
  OTHER_SCHOOL_FILES,
  ROOT,
  tenantFindings,
  userWriteFindings,
  userWrites,
} from "../../scripts/architecture";

const report = analyse();
const dataLayer = dataLayerRules();
const where = (items: Finding[]) => items.map((i) => `${i.file}:${i.line}  ${i.text}`);

/**
 * Type assertions src may keep, each with a one-line reason where it is written (21: the PDF's
 * fontkit 3 handed to pdf-lib, whose type describes its own fork's font, src/lib/pdf.ts; 22-26:
 * the typed contexts, where the route's declared access meets the request's context: src/lib/route.ts
 * `contextOf` and `serve`, which TypeScript cannot relate to a route's generic type; 27: the D1
 * binding under a drizzle handle, whose type hides it, for the school move's batches of
 * hand-written SQL with parameters, src/db/move.ts).
 */
const MAX_ASSERTIONS = 27;

describe("the code's shape", () => {
  it("writes no tenant condition outside the data layer (src/db)", () => {
    expect(where(report.tenantConditions)).toEqual([]);
  });
  it("writes no school in a module: no scope, insertedSchool or schoolId value, ofSchool only in platform files", () => {
    expect(leftToConvert(report), where(report.tenantWrites).join("\n")).toEqual({});
    for (const file of Object.keys(OTHER_SCHOOL_FILES)) {
      expect(readFileSync(join(ROOT, file), "utf8"), file).toContain("ofSchool(");
    }
  });
  it("refuses each hand-written school in a module file", () => {
    const file = "src/modules/x/y.ts";
    const found = tenantFindings(
      file,
      `const a = sql\`SELECT 1 FROM \${x.from} WHERE \${x.scope(ctx)}\`;
       const b = db.insert(t).values({ schoolId: school, name });
       const c = db.update(t).set({ schoolId });
       const d = columnList(t, { schoolId: s });
       const e = { schoolId: ctx.schoolId };
       const f = X.insertedSchool(ctx);
       const g = X.ofSchool(3);
       const ok = { schoolId: null, other: ctx.schoolId };
       const fine = X.where(ctx, eq(t.id, 1));`,
    );
    expect(found).toEqual([
      "x.scope(ctx)",
      "schoolId: school",
      "schoolId",
      "schoolId: s",
      "schoolId: ctx.schoolId",
      "X.insertedSchool(ctx)",
      "X.ofSchool(3)",
    ]);
    expect(tenantFindings("src/modules/school/service.ts", "X.ofSchool(3);")).toEqual([]);
  });
  it("keeps audit payloads, audit calls and JSON decoding in the data layer", () => {
    expect(where(dataLayer.findings)).toEqual([]);
  });
  it("refuses each hand-written audit payload, audit call and unchecked parse in a module file", () => {
    const found = dataLayerFindings(
      "src/modules/x/y.ts",
      `import { auditCreate } from "../../db/audit";
       const a = sql\`SELECT json_object('old', f.name, 'new', j.value) FROM f\`;
       const b = auditCreate(ctx, target, values, 1);
       const c = Families.auditAction(ctx, where, "x", changes);
       const d = JSON.parse(text);
       const fine = f.auditRows(ctx, sql\`FROM f\`, { action: "update", changes: { name: { old: null, new: 1 } } });`,
    );
    expect(found.map((f) => f.split(":")[0])).toEqual([
      "imports the audit helpers",
      "an audit payload written by hand",
      "calls an audit helper",
      "calls an audit helper",
      "an unchecked JSON.parse",
    ]);
  });
  it("writes no user row in a module without mirroring it to the anchors", () => {
    expect(where(userWrites())).toEqual([]);
    const found = userWriteFindings(
      "src/modules/x/y.ts",
      `const a = Users.update(ctx, where, { firstName });
       const b = ctx.deps.db.update(users).set({ status: "active" });
       const fine = Users.select(ctx, { id: users.id });`,
    );
    expect(found.map((f) => f.line)).toEqual([1, 2]);
    expect(userWriteFindings("src/modules/x/y.ts", "batch.add(...Users.update(ctx, w, s)).mirrorUsers([id]);")).toEqual(
      [],
    );
  });
  it("imports another module only through its face (api.ts)", () => {
    expect(where(report.internalImports)).toEqual([]);
  });
  it("keeps src/lib free of modules and middleware", () => {
    expect(where(report.libImportsModules)).toEqual([]);
  });
  it("has no import cycle", () => {
    expect(report.cycles.map((c) => c.join(" > "))).toEqual([]);
  });
  it("has no cycle among modules, counting dynamic imports", () => {
    expect(report.moduleCycles.map((c) => c.join(" <> "))).toEqual([]);
  });
  it("imports no module of a higher layer, and every module has its layer", () => {
    expect(where(report.upwardImports)).toEqual([]);
    expect(report.unlayered).toEqual([]);
  });
  it("has no `any`", () => {
    expect(where(report.anys)).toEqual([]);
  });
  it(`keeps at most ${MAX_ASSERTIONS} type assertions, each with its reason`, () => {
    expect(where(report.assertionsWithoutReason)).toEqual([]);
    expect(report.assertions.length, where(report.assertions).join("\n")).toBeLessThanOrEqual(MAX_ASSERTIONS);
  });
  it("passes no plain string to the error helpers or verbatim: every text is a message (m`...`)", () => {
    expect(where(report.plainMessages)).toEqual([]);
  });
  it(`has no source file over ${MAX_LINES} lines`, () => {
    expect(where(report.longFiles)).toEqual([]);
  });
  it("keeps test code out of src: fixtures live in test/fixtures", () => {
    const src = join(ROOT, "src");
    const importsTest = readdirSync(src, { recursive: true, encoding: "utf8" })
      .filter((f) => f.endsWith(".ts"))
      .filter((f) => /from\s+["'](\.\.\/)+test\//.test(readFileSync(join(src, f), "utf8")));
    expect(importsTest).toEqual([]);
    expect(
      readdirSync(join(src, "modules"), { recursive: true, encoding: "utf8" }).filter((f) => /fixture/.test(f)),
    ).toEqual([]);
  });
  it("reads every source file", () => {
    // A walk that found nothing would pass every check above.
    expect(report.files).toBeGreaterThan(100);
  });
});
