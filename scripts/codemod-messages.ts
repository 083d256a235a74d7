/**
 * The codemod that turned English strings into messages (src/lib/message.ts), kept so a branch
 * written before it can be converted the same way after a merge:
 *
 *   npx tsx scripts/codemod-messages.ts [files...]      # default: every .ts file under src/
 *
 * It rewrites, in place and only where the text is a literal (a string, a template, a `+` of them,
 * or a `? :` between them):
 * - the error helpers' messages: `badRequest`, `conflict`, `unprocessable`, `forbidden`, `new
 *   ApiError(status, detail, { title })`, and `notFound("Student", id)` -> `notFound(m`Student ${id}
 *   not found`)`;
 * - the messages of the resource block and the data layer: `message`, `conflictMessage`,
 *   `reference`, `conflict` (a string, or an arrow function returning one), `label`;
 * - the texts of files: `sheet`, `filename`, `header`, and `columns: [...]`;
 * - zod messages: `.min(1, "Required")` and `.refine(f, { message })` -> `zodMessage(m`...`)`, and
 *   `ctx.addIssue({ message })` -> `m`...`.render()`.
 *
 * Values stay values (`${name}`). What it cannot convert (a message built elsewhere, a value that is
 * English text such as `${n > 1 ? "s" : ""}`) it lists for a hand edit; the type checker then
 * names the rest (the helpers take a `Message`, never a string). Run `npm run -s format` after it.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import ts from "school-api-typegen/typescript";

const ROOT = resolve(import.meta.dirname, "..");

/** Calls whose arguments at these positions are messages (the error helpers and local wrappers of them). */
const MESSAGE_ARGS: Record<string, number[]> = {
  badRequest: [0],
  conflict: [0],
  unprocessable: [0],
  forbidden: [0],
  ApiError: [1],
  tooMany: [0, 2],
  unauthorized: [0, 1],
  XlsxError: [0],
  ZipError: [0],
  damaged: [0],
  fileError: [0],
};

/** Properties whose literal value is a message. */
const MESSAGE_PROPS = new Set([
  "message",
  "conflictMessage",
  "reference",
  "conflict",
  "label",
  "sheet",
  "filename",
  "header",
]);

/** zod methods whose last argument may be a message. */
const ZOD_CHECKS = new Set([
  "min",
  "max",
  "length",
  "regex",
  "refine",
  "email",
  "url",
  "int",
  "nonempty",
  "startsWith",
]);

/** Files the codemod leaves alone: operator-facing texts (configuration errors, logs) and the mechanism. */
const SKIP = new Set(["src/config.ts", "src/lib/message.ts", "src/lib/language.ts"]);

interface Edit {
  start: number;
  end: number;
  text: string;
}

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : path.endsWith(".ts") ? [path] : [];
  });
}

/** A string's text as the inside of a template literal. */
const escapeTemplate = (text: string) =>
  text.replace(/\\/g, "\\\\").replace(/`/g, "\\`").replace(/\$\{/g, "\\${").replace(/\n/g, "\\n");

export function convert(file: string, text: string): { text: string; review: string[] } {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const edits: Edit[] = [];
  const review: string[] = [];
  const where = (node: ts.Node) =>
    `${relative(ROOT, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

  const isLiteral = (node: ts.Node): boolean =>
    ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node);

  /** The inside of a template literal for a literal, a `+` chain with a literal in it, or undefined. */
  function templateBody(node: ts.Expression): string | undefined {
    if (ts.isParenthesizedExpression(node)) return templateBody(node.expression);
    if (ts.isStringLiteral(node)) return escapeTemplate(node.text);
    if (ts.isNoSubstitutionTemplateLiteral(node) || ts.isTemplateExpression(node)) {
      const raw = node.getText(source);
      if (ts.isTemplateExpression(node)) {
        for (const span of node.templateSpans) {
          let englishInside = false;
          const look = (n: ts.Node) => {
            if (ts.isStringLiteral(n) && /[A-Za-z]{2,}/.test(n.text)) englishInside = true;
            ts.forEachChild(n, look);
          };
          look(span.expression);
          if (englishInside)
            review.push(`${where(span.expression)}  English inside a value: ${span.expression.getText(source)}`);
        }
      }
      return raw.slice(1, -1);
    }
    if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
      const hasLiteral = (n: ts.Expression): boolean =>
        isLiteral(n) ||
        (ts.isParenthesizedExpression(n) && hasLiteral(n.expression)) ||
        (ts.isBinaryExpression(n) &&
          n.operatorToken.kind === ts.SyntaxKind.PlusToken &&
          (hasLiteral(n.left) || hasLiteral(n.right)));
      if (!hasLiteral(node)) return undefined;
      const side = (n: ts.Expression) => templateBody(n) ?? `\${${n.getText(source)}}`;
      return side(node.left) + side(node.right);
    }
    return undefined;
  }

  /** The message expression for a literal (or a `? :` of them), or undefined. */
  function message(node: ts.Expression): string | undefined {
    if (ts.isTaggedTemplateExpression(node)) return undefined; // already a message
    if (ts.isParenthesizedExpression(node)) return message(node.expression);
    if (ts.isConditionalExpression(node)) {
      const a = message(node.whenTrue) ?? (isMessageLike(node.whenTrue) ? node.whenTrue.getText(source) : undefined);
      const b = message(node.whenFalse) ?? (isMessageLike(node.whenFalse) ? node.whenFalse.getText(source) : undefined);
      if (a === undefined || b === undefined) return undefined;
      if (a === node.whenTrue.getText(source) && b === node.whenFalse.getText(source)) return undefined;
      return `${node.condition.getText(source)} ? ${a} : ${b}`;
    }
    const body = templateBody(node);
    return body === undefined ? undefined : `m\`${body}\``;
  }

  const isMessageLike = (node: ts.Expression) => ts.isTaggedTemplateExpression(node) || ts.isIdentifier(node);

  function replace(node: ts.Node, text: string) {
    edits.push({ start: node.getStart(source), end: node.getEnd(), text });
  }

  function convertArg(arg: ts.Expression | undefined, callee: string) {
    if (!arg) return;
    const converted = message(arg);
    if (converted !== undefined) replace(arg, converted);
    else if (!ts.isTaggedTemplateExpression(arg))
      review.push(`${where(arg)}  ${callee}(${arg.getText(source).slice(0, 80)})`);
  }

  const calleeName = (expr: ts.LeftHandSideExpression): string =>
    ts.isIdentifier(expr) ? expr.text : ts.isPropertyAccessExpression(expr) ? expr.name.text : "";

  /** Whether an object literal is the params of a zod call (`.refine(f, { message })`, `addIssue({ message })`). */
  function zodCallOf(obj: ts.ObjectLiteralExpression): string | undefined {
    const call = obj.parent;
    if (!call || !ts.isCallExpression(call)) return undefined;
    const name = calleeName(call.expression);
    if (name === "addIssue") return "addIssue";
    if (ZOD_CHECKS.has(name) || name === "superRefine") return "check";
    return undefined;
  }

  function notFound(call: ts.CallExpression) {
    const [what, id] = call.arguments;
    if (!what || call.arguments.length > 2) return;
    if (call.arguments.length === 1 && !isLiteral(what)) {
      // A message already, or one built elsewhere.
      if (!ts.isTaggedTemplateExpression(what)) review.push(`${where(what)}  notFound(${what.getText(source)})`);
      return;
    }
    const tail = id === undefined ? " not found" : ` \${${id.getText(source)}} not found`;
    // `notFound(n === 1 ? "User" : "Users", ids)`: one message per branch.
    const choice = ts.isParenthesizedExpression(what) ? what.expression : what;
    if (ts.isConditionalExpression(choice)) {
      const a = templateBody(choice.whenTrue);
      const b = templateBody(choice.whenFalse);
      if (a !== undefined && b !== undefined) {
        const text = `${choice.condition.getText(source)} ? m\`${a}${tail}\` : m\`${b}${tail}\``;
        edits.push({ start: what.getStart(source), end: (id ?? what).getEnd(), text });
        return;
      }
    }
    const body = templateBody(what);
    const subject = body ?? `\${${what.getText(source)}}`;
    if (body === undefined)
      review.push(`${where(what)}  notFound(${what.getText(source)}): a label that must be a message`);
    const text = id === undefined ? `${subject} not found` : `${subject} \${${id.getText(source)}} not found`;
    edits.push({ start: what.getStart(source), end: (id ?? what).getEnd(), text: `m\`${text}\`` });
  }

  function visit(node: ts.Node) {
    if (ts.isCallExpression(node) || ts.isNewExpression(node)) {
      const name = calleeName(node.expression);
      const args = node.arguments ?? ts.factory.createNodeArray();
      if (name === "notFound" && ts.isCallExpression(node) && ts.isIdentifier(node.expression)) notFound(node);
      else if (Object.hasOwn(MESSAGE_ARGS, name)) {
        for (const i of MESSAGE_ARGS[name] ?? []) convertArg(args[i], name);
        // `new ApiError(status, detail, { title })`
        const options = name === "ApiError" ? args[2] : undefined;
        if (options && ts.isObjectLiteralExpression(options)) {
          for (const p of options.properties) {
            if (ts.isPropertyAssignment(p) && p.name.getText(source) === "title") convertArg(p.initializer, "title");
          }
        }
      } else if (ZOD_CHECKS.has(name) && ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const last = args[args.length - 1];
        const minArgs =
          name === "refine" ||
          name === "min" ||
          name === "max" ||
          name === "length" ||
          name === "regex" ||
          name === "startsWith"
            ? 2
            : 1;
        if (last && args.length >= minArgs && isLiteral(last)) {
          const converted = message(last);
          if (converted) replace(last, `zodMessage(${converted})`);
        }
      }
    }
    if (ts.isPropertyAssignment(node) && ts.isObjectLiteralExpression(node.parent)) {
      const name = node.name.getText(source);
      const value = node.initializer;
      const zod = zodCallOf(node.parent);
      if (name === "message" && zod === "check" && isLiteral(value)) {
        const converted = message(value);
        if (converted) replace(node, `...zodMessage(${converted})`);
      } else if (name === "message" && zod === "addIssue") {
        const converted = message(value);
        if (converted) replace(value, `${converted}.render()`);
      } else if (MESSAGE_PROPS.has(name)) {
        if (ts.isArrowFunction(value) && !ts.isBlock(value.body)) {
          const converted = message(value.body);
          if (converted) replace(value.body, converted);
        } else if (name !== "label" || ts.isStringLiteral(value)) {
          const converted = message(value);
          if (converted) replace(value, converted);
        }
      } else if (name === "columns" && ts.isArrayLiteralExpression(value)) {
        for (const e of value.elements) {
          const converted = message(e);
          if (converted) replace(e, converted);
        }
      }
    }
    ts.forEachChild(node, visit);
  }
  visit(source);

  if (edits.length === 0) return { text, review };
  // Outermost edits win: a literal inside an argument that was replaced as a whole is not edited again.
  edits.sort((a, b) => a.start - b.start || b.end - a.end);
  const kept: Edit[] = [];
  for (const e of edits) {
    const last = kept[kept.length - 1];
    if (last && e.start < last.end) continue;
    kept.push(e);
  }
  let out = text;
  for (const e of kept.reverse()) out = out.slice(0, e.start) + e.text + out.slice(e.end);
  out = addImports(file, out);
  return { text: out, review };
}

/** Adds `m` (and `zodMessage`) to the file's import of src/lib/message.ts, or a new import. */
function addImports(file: string, text: string): string {
  const needed = ["m", ...(/\bzodMessage\(/.test(text) ? ["zodMessage"] : [])];
  const target = relative(join(file, ".."), join(ROOT, "src/lib/message")).replace(/\\/g, "/");
  const spec = target.startsWith(".") ? target : `./${target}`;
  const existing = new RegExp(`import \\{([^}]*)\\} from "${spec.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&")}";`);
  const match = existing.exec(text);
  if (match) {
    const names = new Set(
      (match[1] ?? "")
        .split(",")
        .map((n) => n.trim())
        .filter(Boolean),
    );
    for (const n of needed) names.add(n);
    return text.replace(existing, `import { ${[...names].join(", ")} } from "${spec}";`);
  }
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const imports = source.statements.filter(ts.isImportDeclaration);
  const at = imports.length ? (imports[imports.length - 1]?.getEnd() ?? 0) : 0;
  return `${text.slice(0, at)}\nimport { ${needed.join(", ")} } from "${spec}";${text.slice(at)}`;
}

const isMain = process.argv[1] && resolve(process.argv[1]) === resolve(import.meta.filename);
if (isMain) {
  const files = process.argv.slice(2).length
    ? process.argv.slice(2).map((f) => resolve(f))
    : walk(join(ROOT, "src")).filter((f) => !SKIP.has(relative(ROOT, f)));
  let changed = 0;
  const review: string[] = [];
  for (const file of files) {
    const before = readFileSync(file, "utf8");
    const result = convert(file, before);
    review.push(...result.review);
    if (result.text !== before) {
      writeFileSync(file, result.text);
      changed++;
    }
  }
  console.log(`${changed} files changed`);
  if (review.length) console.log(`\nfor a hand edit:\n${review.join("\n")}`);
}
