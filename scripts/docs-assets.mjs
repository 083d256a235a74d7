// Copies Swagger UI's files from the installed, pinned swagger-ui-dist, and the fonts the route
// lists' PDFs embed from the installed, pinned font packages, into public/, the Workers Static
// Assets directory, so /api/docs works offline and from our own deployment and the PDFs draw every
// name; none of it enters the Worker bundle. wrangler.toml's [build] command runs it before
// `wrangler dev`, `wrangler deploy` and `wrangler deploy --dry-run` (and vitest.config.ts before
// the tests). It copies only what changed (so `wrangler dev` does not reload for nothing) and
// removes the files of other versions.
//
//   public/api/docs/assets/<version>/swagger-ui-dist/{swagger-ui-bundle.js,swagger-ui.css,...}
//   public/fonts/{NotoSans-Regular.ttf,NotoSans-Bold.ttf,...,OFL.txt}
//   public/board.html (web/board.html: the office's live dismissal board, served at /board)
//   public/data/{messages.es.json,phone-metadata.min.json} (read once per isolate: src/lib/isolate-data.ts)
//   public/data/unicode-properties.trie (read with an isolate's first PDF: src/lib/pdf-lib/binary-trie.ts)
//
// src/app.ts points the page there (`baseUrl` of @hono/swagger-ui, with the same version);
// src/lib/pdf-fonts.ts names the fonts, which the Worker reads through its ASSETS binding.
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("..", import.meta.url));
const require = createRequire(import.meta.url);
const dist = dirname(require.resolve("swagger-ui-dist/package.json"));
const { version } = JSON.parse(readFileSync(join(dist, "package.json"), "utf8"));

const directory = join(root, "public");
const assets = join(directory, "api/docs/assets");
const target = join(assets, version, "swagger-ui-dist");
const FILES = ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png", "LICENSE", "NOTICE"];

mkdirSync(target, { recursive: true });
for (const other of readdirSync(assets)) {
  if (other !== version) rmSync(join(assets, other), { recursive: true, force: true });
}
let copied = 0;
/** Copies `from` to `to` unless `to` already holds the same bytes. */
function copy(from, to) {
  if (existsSync(to) && readFileSync(to).equals(readFileSync(from))) return;
  copyFileSync(from, to);
  copied++;
}
for (const file of FILES) copy(join(dist, file), join(target, file));

// The PDF fonts (SIL Open Font License 1.1), regular and bold, under the names the Worker asks for
// (src/lib/pdf.ts), each family with its license: Noto Sans for Latin (Vietnamese included), Greek
// and Cyrillic, and as fallbacks Noto Naskh Arabic (a version whose letters' dots are part of each
// contextual form, which pdf-lib can place: it applies no mark positioning) and Noto Sans SC (CJK
// ideographs and kana). TrueType outlines, as their packages ship them.
const FONTS = [
  [
    "@expo-google-fonts/noto-sans",
    "NotoSans",
    "400Regular/NotoSans_400Regular.ttf",
    "700Bold/NotoSans_700Bold.ttf",
    "LICENSE_FONT",
  ],
  [
    "@embedpdf/fonts-arabic",
    "NotoNaskhArabic",
    "fonts/NotoNaskhArabic-Regular.ttf",
    "fonts/NotoNaskhArabic-Bold.ttf",
    "LICENSE",
  ],
  [
    "@expo-google-fonts/noto-sans-sc",
    "NotoSansSC",
    "400Regular/NotoSansSC_400Regular.ttf",
    "700Bold/NotoSansSC_700Bold.ttf",
    "LICENSE_FONT",
  ],
];
/** A package's directory (some export no package.json: found above its main file). */
function packageDir(pkg) {
  let dir = dirname(require.resolve(pkg));
  while (!existsSync(join(dir, "package.json"))) dir = dirname(dir);
  return dir;
}
const fonts = join(directory, "fonts");
mkdirSync(fonts, { recursive: true });
const wanted = FONTS.flatMap(([pkg, family, regular, bold, license]) => {
  const at = packageDir(pkg);
  return [
    [join(at, regular), `${family}-Regular.ttf`],
    [join(at, bold), `${family}-Bold.ttf`],
    [join(at, license), `${family}-OFL.txt`],
  ];
});
const names = new Set(wanted.map(([, name]) => name));
for (const other of readdirSync(fonts)) if (!names.has(other)) rmSync(join(fonts, other), { force: true });
for (const [from, name] of wanted) copy(from, join(fonts, name));

// Data the Worker reads once per isolate instead of bundling it (src/lib/isolate-data.ts names
// them): the Spanish catalogue of messages and libphonenumber-js's "min" metadata.
const data = join(directory, "data");
mkdirSync(data, { recursive: true });
copy(join(root, "src/lib/messages/es.json"), join(data, "messages.es.json"));
copy(join(packageDir("libphonenumber-js"), "metadata.min.json"), join(data, "phone-metadata.min.json"));
// And the Unicode data of fontkit's shapers, read with an isolate's first PDF (src/lib/pdf-lib/binary-trie.ts).
copy(join(packageDir("unicode-properties"), "data.trie"), join(data, "unicode-properties.trie"));

// The office's live dismissal board, /board (web/board.html as written: no build step).
copy(join(root, "web/board.html"), join(directory, "board.html"));

// The path names the version, so browsers may keep the files for good.
const headers = "/api/docs/assets/*\n  Cache-Control: public, max-age=31536000, immutable\n";
const headersFile = join(directory, "_headers");
if (!existsSync(headersFile) || readFileSync(headersFile, "utf8") !== headers) writeFileSync(headersFile, headers);
if (copied)
  console.error(
    `static assets: swagger-ui-dist ${version}, the PDF fonts, the board page and the isolate's data, ${copied} file(s) copied to public/`,
  );
