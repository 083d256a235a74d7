import { defineModule } from "../../lib/module";
import { listDevOutbox } from "./routes";

/** The development outbox: mounted only when ENVIRONMENT=development. */
export default defineModule({ name: "dev", developmentOnly: true, operations: [listDevOutbox] });
