import { defineModule } from "../../lib/module";

/** The development outboxes (SMS, push) and S3 endpoint: mounted only when ENVIRONMENT=development. */
export default defineModule({
  name: "dev",
  developmentOnly: true,
  paths: ["/api/v1/dev", "/dev/s3"],
  load: async () => {
    const [{ listDevOutbox, listDevPushOutbox }, { devS3Router }] = await Promise.all([
      import("./routes"),
      import("./s3"),
    ]);
    return { operations: [listDevOutbox, listDevPushOutbox], router: devS3Router };
  },
});
