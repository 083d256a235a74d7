/**
 * zod's locale index reduced to the languages we speak, English and Spanish. wrangler.toml's [alias]
 * puts this module in place of `../locales/index.js`, the path by which zod's own modules import the
 * index, when it bundles the Worker. @hono/zod-openapi hands `z` around as a value, so the bundler
 * cannot drop the unused locales (~360 KiB) by itself. English is the locale zod registers by
 * default; src/lib/message.ts picks the locale of each parse's language. test/node/bundle.test.ts
 * checks that only these two are bundled.
 */
export { default as en } from "zod/v4/locales/en.js";
export { default as es } from "zod/v4/locales/es.js";
