/**
 * What keeps the code's shape: read from the source with the TypeScript 5 parser (the project
 * compiles with TypeScript 7, which has no compiler API; tools/typegen carries TypeScript 5).
 *
 * - `assertions`: type assertions (`x as T`, `<T>x`; `as const` is not one) in src, each of which
 *   must carry a reason: a comment on its line or the line above.
 * - `anys`: the `any` type written anywhere in src.
 * - `internalImports`: imports of another module's files other than its face (`api.ts`; the
 *   registry src/modules/index.ts imports each module's `index.ts`).
 * - `libImportsModules`: files of src/lib that import a module (or the middleware).
 * - `tenantConditions`: tenant conditions written outside the data layer (src/db): a table's
 *   `schoolId` column used in a module, or `school_id` in SQL text.
 * - `tenantWrites` (`tenantRules`): in src/modules, a table's scope placed by hand (`X.scope(ctx)`),
 *   `insertedSchool(`, a `schoolId:` value in a write (`.values({...})`, `.set({...})`,
 *   `columnList(t, {...})`, or `schoolId: ctx.schoolId` anywhere), the current school as a value
 *   in an `sql` template (`${ctx.schoolId}`, or a `const school = ctx.schoolId`), and `ofSchool(` outside the
 *   platform files of `OTHER_SCHOOL_FILES`: the data layer writes the school (`insertRow`,
 *   `insertFrom`, `joinOn`, `where`, `exists`, `pick`; a table of rows that are not records:
 *   `SchoolRows`, src/db/school-rows.ts). None is left.
 * - `cycles`: import cycles among src files (runtime imports; `import type` does not count).
 * - `moduleCycles`: cycles among modules, counting every runtime import between them, the dynamic
 *   `import()`s too (a lazy import hides a cycle from the file graph, not from the reader).
 * - `upwardImports`: a module importing one of a higher layer (`LAYERS`); `unlayered`: a module
 *   no layer names.
 * - `longFiles`: src files over 600 lines.
 * - `plainMessages`: a plain string (a literal or an untagged template) given to the error helpers
 *   (`badRequest`, `notFound`, `conflict`, `unprocessable`, `forbidden`, `new ApiError`) or to
 *   `verbatim`: every text the service writes is a message, `` m`...` `` (src/lib/message.ts), with
 *   its Spanish in the catalogue. (The helpers take a `Message`, so the type checker refuses most;
 *   this also catches `verbatim("English")`, which would slip a sentence past the catalogue.)
 *
 * - `dataLayerRules` (its own walk): audit payloads, audit helper calls and imports, and
 *   `JSON.parse` in src/modules: none is left (an import's audit rows are `X.auditRows`).
 *
 * - `userWrites` (its own walk): a write of `user` in a module file that does not mirror it
 *   (`mirrorUsers(`, src/db/anchors.ts): none is left.
 *
 * `npm run -s architecture` prints the figures; test/node/architecture.test.ts holds them.
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve, sep } from "node:path";
import ts from "school-api-typegen/typescript";

export const ROOT = resolve(import.meta.dirname, "..");
const SRC = join(ROOT, "src");
export const MAX_LINES = 600;

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** Where a relative import points: the file it resolves to. */
function resolveImport(from: string, specifier: string): string | undefined {
  const base = resolve(dirname(from), specifier);
  for (const candidate of [base, `${base}.ts`, join(base, "index.ts")]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {
      // not this one
    }
  }
  return undefined;
}

/** `modules/<name>/...` -> name; else undefined. */
function moduleOf(file: string): string | undefined {
  const parts = relative(SRC, file).split(sep);
  return parts[0] === "modules" && parts.length > 2 ? parts[1] : undefined;
}

const FACES = new Set(["api.ts"]);

/**
 * The modules' floors, lowest first: a module imports from its own floor or below, never above
 * (docs/architecture.md "Layers"). What a lower floor must tell a higher one goes through a hook the
 * higher declares (a fact change: src/lib/facts.ts; a school event: src/lib/school-events.ts).
 */
export const LAYERS: readonly (readonly [string, readonly string[]])[] = [
  [
    "platform",
    [
      "health",
      "version",
      "permission",
      "application-module",
      "legal-document",
      "cron-history",
      "address",
      "transport-rules",
      "schedule-configuration",
    ],
  ],
  ["school", ["school"]],
  [
    "identity",
    [
      "role",
      "user",
      "parent",
      "delegate",
      "role-user",
      "auth",
      "teacher",
      "administrative-user",
      "school-administrator",
    ],
  ],
  ["calendar", ["school-configuration", "holiday-cycle", "school-schedule"]],
  [
    "people and records",
    [
      "family",
      "student",
      "trusted-person",
      "trusted-address",
      "document",
      "device-token",
      "group",
      "notification",
      "webhook",
    ],
  ],
  ["transport", ["transport", "route-student", "route-availability", "route-run"]],
  ["the afternoon", ["exit-permission", "transportation-summary", "invitation", "dismissal"]],
  ["engagement", ["event", "lost-article", "task", "appointment"]],
  ["operations", ["bulk-process", "audit-log", "reset-data", "dev"]],
];

const layerOf = new Map(LAYERS.flatMap(([, modules], i) => modules.map((m) => [m, i] as const)));

export interface Finding {
  file: string;
  line: number;
  text: string;
}

export interface Report {
  files: number;
  assertions: Finding[];
  assertionsWithoutReason: Finding[];
  anys: Finding[];
  internalImports: Finding[];
  libImportsModules: Finding[];
  tenantConditions: Finding[];
  tenantWrites: Finding[];
  cycles: string[][];
  moduleCycles: string[][];
  upwardImports: Finding[];
  unlayered: string[];
  longFiles: Finding[];
  plainMessages: Finding[];
}

/** The error helpers and the argument that is their message. */
const MESSAGE_ARGUMENT: Record<string, number> = {
  badRequest: 0,
  notFound: 0,
  conflict: 0,
  unprocessable: 0,
  forbidden: 0,
  ApiError: 1,
  verbatim: 0,
};

/**
 * Platform code about another school than the current one, which names that school with
 * `X.ofSchool(school)` (src/db/table.ts): each file with its reason.
 */
export const OTHER_SCHOOL_FILES: Readonly<Record<string, string>> = {
  "src/modules/school/resource.ts": "a school's own address, read with the school",
  "src/modules/school/service.ts": "a school's address and the rows of a school being deleted",
  "src/modules/application-module/state.ts": "the modules of a named school (public pages, a user's schools)",
  "src/modules/bulk-process/export.ts": "the school export: every table's rows of the school (dump.ts ofSchool)",
  "src/modules/exit-permission/pass.ts": "the public pickup pass: no current school, the permission's row names it",
  "src/modules/user/identity.ts": "a person's copy in the school a row names (a user across their schools)",
  "src/modules/user/people.ts": "the profiles a membership removes, in the membership's own school",
  "src/modules/user/service.ts": "another administrator of the membership's own school (deleting a user)",
  "src/modules/teacher/staff.ts": "removed from the profile's own school, for a query with no context at hand",
};

/** Callees whose object-literal argument is a written row: a `schoolId` key there is a hand-written school. */
const WRITE_CALLS = new Set(["values", "set", "columnList"]);

/** Names a file gives the current school: `const school = ctx.schoolId` (or `?? 0`). */
const schoolNames = new WeakMap<ts.SourceFile, Set<string>>();

/**
 * `ctx.schoolId`, or a name the file gives it: the school written as a value into hand-written SQL
 * (a positional `school_id` of an `INSERT ... SELECT`, a hand-made condition).
 */
function isSchoolValue(expression: ts.Expression, source: ts.SourceFile): boolean {
  const text = expression.getText(source);
  if (text === "ctx.schoolId") return true;
  let names = schoolNames.get(source);
  if (!names) {
    names = new Set([...source.text.matchAll(/const (\w+) = ctx\.schoolId(?: \?\? 0)?;/g)].map((m) => m[1] ?? ""));
    schoolNames.set(source, names);
  }
  return ts.isIdentifier(expression) && names.has(text);
}

/** The `tenantWrites` rule at one node of a module file (see the file's comment). */
function tenantRules(node: ts.Node, file: string, source: ts.SourceFile, found: (node: ts.Node) => void) {
  if (ts.isTemplateSpan(node) && isSchoolValue(node.expression, source)) {
    const template = node.parent.parent;
    if (ts.isTaggedTemplateExpression(template) && template.tag.getText(source).startsWith("sql"))
      found(node.expression);
    return;
  }
  if (ts.isCallExpression(node)) {
    const callee = node.expression;
    const name = ts.isPropertyAccessExpression(callee)
      ? callee.name.text
      : ts.isIdentifier(callee)
        ? callee.text
        : undefined;
    if (name === "scope" && ts.isPropertyAccessExpression(callee)) found(node);
    if (name === "insertedSchool") found(node);
    if (name === "ofSchool" && !Object.hasOwn(OTHER_SCHOOL_FILES, file.split(sep).join("/"))) found(node);
    return;
  }
  if (!(ts.isPropertyAssignment(node) || ts.isShorthandPropertyAssignment(node))) return;
  if (node.name.getText(source) !== "schoolId") return;
  const value = ts.isPropertyAssignment(node) ? node.initializer.getText(source) : "schoolId";
  const literal = node.parent;
  const call = literal.parent;
  const callee = call && ts.isCallExpression(call) ? call.expression : undefined;
  const calleeName =
    callee && ts.isPropertyAccessExpression(callee)
      ? callee.name.text
      : callee && ts.isIdentifier(callee)
        ? callee.text
        : undefined;
  // `schoolId: null` names no school (a platform row of the audit trail).
  if (value === "null") return;
  if (value === "ctx.schoolId" || (calleeName !== undefined && WRITE_CALLS.has(calleeName))) found(node);
}

export function analyse(): Report {
  const files = walk(SRC);
  const report: Report = {
    files: files.length,
    assertions: [],
    assertionsWithoutReason: [],
    anys: [],
    internalImports: [],
    libImportsModules: [],
    tenantConditions: [],
    tenantWrites: [],
    cycles: [],
    moduleCycles: [],
    upwardImports: [],
    unlayered: [],
    longFiles: [],
    plainMessages: [],
  };
  const graph = new Map<string, string[]>();
  /** Module -> the modules it imports at run time (static or dynamic). */
  const modules = new Map<string, Set<string>>();
  const moduleImport = (module: string | undefined, target: string, f: () => Finding) => {
    const targetModule = moduleOf(target);
    if (!module || !targetModule || targetModule === module) return;
    modules.set(module, (modules.get(module) ?? new Set()).add(targetModule));
    const from = layerOf.get(module);
    const to = layerOf.get(targetModule);
    if (from !== undefined && to !== undefined && to > from) report.upwardImports.push(f());
  };

  for (const file of files) {
    const text = readFileSync(file, "utf8");
    const lines = text.split("\n");
    const rel = relative(ROOT, file);
    if (lines.length > MAX_LINES)
      report.longFiles.push({ file: rel, line: lines.length, text: `${lines.length} lines` });
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
    const finding = (node: ts.Node): Finding => ({
      file: rel,
      line: lineOf(node),
      text: node.getText(source).slice(0, 120),
    });
    const inDataLayer = rel.startsWith(`src${sep}db${sep}`);
    const module = moduleOf(file);
    /** Names this file imports from the data layer's table files: tables. */
    const tables = new Set<string>();
    const runtime: string[] = [];

    const hasReason = (node: ts.Node) => {
      const line = lineOf(node);
      const own = lines[line - 1] ?? "";
      const before = (lines[line - 2] ?? "").trim();
      return own.includes("//") || before.startsWith("//") || before.startsWith("*") || before.endsWith("*/");
    };

    function visit(node: ts.Node) {
      if (ts.isAsExpression(node) || ts.isTypeAssertionExpression(node)) {
        if (node.type.getText(source) !== "const") {
          report.assertions.push(finding(node));
          if (!hasReason(node)) report.assertionsWithoutReason.push(finding(node));
        }
      }
      if (node.kind === ts.SyntaxKind.AnyKeyword) report.anys.push(finding(node));
      if (
        ts.isCallExpression(node) &&
        node.expression.kind === ts.SyntaxKind.ImportKeyword &&
        node.arguments[0] &&
        ts.isStringLiteral(node.arguments[0])
      ) {
        const target = resolveImport(file, node.arguments[0].text);
        if (target) moduleImport(module, target, () => finding(node));
      }
      if ((ts.isCallExpression(node) || ts.isNewExpression(node)) && ts.isIdentifier(node.expression)) {
        const at = MESSAGE_ARGUMENT[node.expression.text];
        const arg = at === undefined ? undefined : node.arguments?.[at];
        if (
          arg &&
          (ts.isStringLiteral(arg) || ts.isNoSubstitutionTemplateLiteral(arg) || ts.isTemplateExpression(arg)) &&
          // verbatim("") (no text of ours) is data.
          /\p{L}/u.test(arg.getText(source))
        ) {
          report.plainMessages.push(finding(node));
        }
      }
      if (module) tenantRules(node, rel, source, (n) => report.tenantWrites.push(finding(n)));
      if (!inDataLayer) {
        if (
          ts.isPropertyAccessExpression(node) &&
          node.name.text === "schoolId" &&
          ts.isIdentifier(node.expression) &&
          tables.has(node.expression.text)
        ) {
          report.tenantConditions.push(finding(node));
        }
        if (
          (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) &&
          /\bschool_id\b/.test(node.text)
        ) {
          report.tenantConditions.push(finding(node));
        }
      }
      ts.forEachChild(node, visit);
    }

    // Imports first: which names are tables, which files this one needs at run time.
    for (const statement of source.statements) {
      if (!(ts.isImportDeclaration(statement) || ts.isExportDeclaration(statement))) continue;
      const spec = statement.moduleSpecifier;
      if (!spec || !ts.isStringLiteral(spec) || !spec.text.startsWith(".")) continue;
      const target = resolveImport(file, spec.text);
      if (!target) continue;
      const typeOnly = ts.isImportDeclaration(statement)
        ? (statement.importClause?.isTypeOnly ?? false) ||
          (statement.importClause?.namedBindings !== undefined &&
            ts.isNamedImports(statement.importClause.namedBindings) &&
            statement.importClause.namedBindings.elements.every((e) => e.isTypeOnly) &&
            !statement.importClause.name)
        : statement.isTypeOnly;
      if (!typeOnly) {
        runtime.push(target);
        moduleImport(module, target, () => finding(statement));
      }
      const targetRel = relative(SRC, target);
      if (ts.isImportDeclaration(statement) && targetRel.startsWith(`db${sep}schema`) && !typeOnly) {
        const bindings = statement.importClause?.namedBindings;
        if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) tables.add(e.name.text);
      }
      const targetModule = moduleOf(target);
      const relFile = relative(SRC, file);
      const isRegistry = relFile === join("modules", "index.ts");
      if (targetModule && targetModule !== module) {
        const face = FACES.has(relative(join(SRC, "modules", targetModule), target));
        const registryImport = isRegistry && target === join(SRC, "modules", targetModule, "index.ts");
        if (!face && !registryImport) report.internalImports.push(finding(statement));
      }
      const importsModuleOrMiddleware =
        targetRel.startsWith(`modules${sep}`) || targetRel.startsWith(`middleware${sep}`);
      if (relFile.startsWith(`lib${sep}`) && importsModuleOrMiddleware)
        report.libImportsModules.push(finding(statement));
    }
    graph.set(file, runtime);
    visit(source);
  }

  // Cycles: strongly connected components of the runtime import graph (Tarjan).
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const connect = (v: string) => {
    order.set(v, index);
    low.set(v, index);
    index++;
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!graph.has(w)) continue;
      if (!order.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v) ?? 0, low.get(w) ?? 0));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) ?? 0, order.get(w) ?? 0));
    }
    if (low.get(v) === order.get(v)) {
      const component: string[] = [];
      let w: string | undefined;
      do {
        w = stack.pop();
        if (w === undefined) break;
        onStack.delete(w);
        component.push(relative(ROOT, w));
      } while (w !== v);
      const selfLoop = (graph.get(v) ?? []).includes(v);
      if (component.length > 1 || selfLoop) report.cycles.push(component);
    }
  };
  for (const v of graph.keys()) if (!order.has(v)) connect(v);

  // Module cycles: the same over the module graph (its few dozen nodes: a reachability check each).
  const reach = (from: string, to: string, seen = new Set<string>()): boolean => {
    for (const next of modules.get(from) ?? []) {
      if (next === to) return true;
      if (!seen.has(next)) {
        seen.add(next);
        if (reach(next, to, seen)) return true;
      }
    }
    return false;
  };
  const inCycle = new Set<string>();
  for (const m of modules.keys()) {
    if (inCycle.has(m) || !reach(m, m)) continue;
    const component = [...modules.keys()].filter((o) => o === m || (reach(m, o) && reach(o, m)));
    for (const o of component) inCycle.add(o);
    report.moduleCycles.push(component.sort());
  }
  const names = readdirSync(join(SRC, "modules")).filter((n) => statSync(join(SRC, "modules", n)).isDirectory());
  report.unlayered = names.filter((n) => !layerOf.has(n));
  return report;
}

/** The `tenantWrites` findings of one module file's text (`file` relative to the repository). */
export function tenantFindings(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    tenantRules(node, file, source, (n) => found.push(n.getText(source)));
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The `tenantWrites` findings per file (none is left). */
export function leftToConvert(r: Report): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const f of r.tenantWrites) {
    const file = f.file.split(sep).join("/");
    counts[file] = (counts[file] ?? 0) + 1;
  }
  return counts;
}

/**
 * Audit and decoding stay in the data layer (issue 31 §3): in src/modules, no hand-written audit
 * payload (`json_object('old', ...)`: `Data.action`/`update`/`insertMany` take named `changes`),
 * no call of the audit helpers (`auditCreate`, `auditUpdate`, `auditDelete`, `auditAction`, a
 * `.auditAction(` method), no import of src/db/audit.ts, and no `JSON.parse(` (a query's JSON is a
 * `jsonOf(expression, schema)` field, src/db/query.ts; other text goes through `parseJson(schema,
 * text)`, src/lib/json.ts).
 */
export interface DataLayerReport {
  findings: Finding[];
  /** Per file, how many. */
  perFile: Map<string, number>;
}

const AUDIT_HELPERS = new Set(["auditCreate", "auditUpdate", "auditDelete", "auditAction"]);

/** The `dataLayerRules` findings of one module file's text (`file` its path). */
function dataLayerFindingsOf(file: string, text: string, rel: string): Finding[] {
  const findings: Finding[] = [];
  const auditFile = join(SRC, "db", "audit.ts");
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const finding = (node: ts.Node, what: string): Finding => ({
    file: rel,
    line: source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1,
    text: `${what}: ${node.getText(source).slice(0, 100)}`,
  });
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (resolveImport(file, statement.moduleSpecifier.text) === auditFile) {
      findings.push(finding(statement, "imports the audit helpers"));
    }
  }
  const visit = (node: ts.Node) => {
    if (
      (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateLiteralToken(node)) &&
      /json_object\(\s*'old'/i.test(node.text)
    ) {
      findings.push(finding(node, "an audit payload written by hand"));
    }
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      if (ts.isIdentifier(callee) && AUDIT_HELPERS.has(callee.text)) {
        findings.push(finding(node, "calls an audit helper"));
      }
      if (ts.isPropertyAccessExpression(callee)) {
        const name = callee.name.text;
        if (name === "auditAction") findings.push(finding(node, "calls an audit helper"));
        if (name === "parse" && ts.isIdentifier(callee.expression) && callee.expression.text === "JSON") {
          findings.push(finding(node, "an unchecked JSON.parse"));
        }
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return findings;
}

/** The `dataLayerRules` findings of a module file's text (`file` relative to the repository). */
export function dataLayerFindings(file: string, text: string): string[] {
  return dataLayerFindingsOf(join(ROOT, file), text, file).map((f) => f.text);
}

export function dataLayerRules(): DataLayerReport {
  const findings = walk(join(SRC, "modules")).flatMap((file) =>
    dataLayerFindingsOf(file, readFileSync(file, "utf8"), relative(ROOT, file)),
  );
  const perFile = new Map<string, number>();
  for (const f of findings) perFile.set(f.file, (perFile.get(f.file) ?? 0) + 1);
  return { findings, perFile };
}

/**
 * The `userWrites` rule (docs/scaling.md "Anchors"): a write of the `user` table in a module
 * (`Users.update(`, `.update(users)`, ...) is mirrored to every database holding the user's anchor,
 * so a module file that writes `user` must say so in the same file (`mirrorUsers(`: the batch
 * that commits it copies the row). People made by phone are the data layer's (`resolveUsers`).
 * Text-based, per file: cheap, and enough to make the mirror hard to forget.
 */
const USER_WRITE =
  /\bUsers\.(update|updateOne|insert|insertMany|insertFrom|insertRow|delete|deleteOne|updateEverySchool|deleteEverySchool|completed)\(|\.(update|insert|delete)\(users\)/;
/**
 * Writes of `user` left unmirrored: the reset (`DELETE /api/v1/reset-data`, the super-admin's) deletes
 * the platform database's users; the shards' anchors stay (docs/scaling.md "Left").
 */
const USER_WRITES_UNMIRRORED = new Set(["src/modules/reset-data/routes.ts"]);

/** The `userWrites` findings of one module file's text (`file` relative to the repository). */
export function userWriteFindings(file: string, text: string): Finding[] {
  if (USER_WRITES_UNMIRRORED.has(file) || text.includes("mirrorUsers(")) return [];
  return text
    .split("\n")
    .flatMap((line, i) =>
      USER_WRITE.test(line) ? [{ file, line: i + 1, text: `a write of user without mirrorUsers: ${line.trim()}` }] : [],
    );
}

export function userWrites(): Finding[] {
  return walk(join(SRC, "modules")).flatMap((file) =>
    userWriteFindings(relative(ROOT, file).split(sep).join("/"), readFileSync(file, "utf8")),
  );
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const r = analyse();
  const verbose = process.argv.includes("--list");
  const line = (name: string, items: unknown[]) => console.log(`${name.padEnd(28)} ${items.length}`);
  console.log(`src files                    ${r.files}`);
  line("type assertions", r.assertions);
  line("  without a reason", r.assertionsWithoutReason);
  line("any", r.anys);
  line("imports into internals", r.internalImports);
  line("src/lib importing modules", r.libImportsModules);
  line("tenant conditions", r.tenantConditions);
  line("tenant writes in modules", r.tenantWrites);
  for (const [file, n] of Object.entries(leftToConvert(r))) console.log(`  ${file}  ${n}`);
  line("import cycles", r.cycles);
  line("module cycles", r.moduleCycles);
  line("upward imports", r.upwardImports);
  line("modules in no layer", r.unlayered);
  line(`files over ${MAX_LINES} lines`, r.longFiles);
  line("plain-string messages", r.plainMessages);
  const d = dataLayerRules();
  line("audit/parse outside the data layer", d.findings);
  if (verbose) for (const f of d.findings) console.log(`${f.file}:${f.line}  ${f.text}`);
  const u = userWrites();
  line("user writes not mirrored", u);
  if (verbose) for (const f of u) console.log(`${f.file}:${f.line}  ${f.text}`);
  if (verbose) {
    for (const [name, items] of Object.entries(r)) {
      if (!Array.isArray(items) || !items.length) continue;
      console.log(`\n## ${name}`);
      for (const i of items) console.log(Array.isArray(i) ? i.join(" > ") : `${i.file}:${i.line}  ${i.text}`);
    }
  }
}
