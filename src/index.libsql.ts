/**
 * The Worker for libSQL deployments (Turso, `sqld`): the same Worker as src/index.ts, with the
 * libSQL HTTP client bundled for when `LIBSQL_URL` is set. `npm run deploy:libsql` deploys it;
 * the default entry leaves the client out to keep its bundle small (docs/performance.md).
 */
import { libsql } from "./db/libsql";
import { createLiveObject, createWorker } from "./index";

export default createWorker(libsql);

/** The live board's hub (a Durable Object per school), reading the day's events from libSQL too. */
export class DismissalLive extends createLiveObject(libsql) {}
