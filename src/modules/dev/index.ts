import { defineModule } from "../../lib/module";
import { listDevOutbox } from "./routes";
import { devS3Router } from "./s3";

/** The development outbox and S3 endpoint: mounted only when ENVIRONMENT=development. */
export default defineModule({ name: "dev", developmentOnly: true, operations: [listDevOutbox], router: devS3Router });
