/**
 * zod's locale index reduced to English. wrangler.toml's [alias] puts this module in place of
 * `../locales/index.js`, the path by which zod's own modules import the index, when it bundles the
 * Worker. @hono/zod-openapi hands `z` around as a value, so the bundler cannot drop the unused
 * locales (~360 KiB) by itself. English is the locale zod registers by default, so the messages
 * are the same; `z.locales` simply offers no other language. test/node/bundle.test.ts checks it.
 */
export { default as en } from "zod/v4/locales/en.js";
