import { defineModule } from "../../lib/module";

/** The development outbox and S3 endpoint: mounted only when ENVIRONMENT=development. */
export default defineModule({
  name: "dev",
  developmentOnly: true,
  paths: ["/api/v1/dev", "/dev/s3"],
  load: async () => {
    const [{ listDevOutbox }, { devS3Router }] = await Promise.all([import("./routes"), import("./s3")]);
    return { operations: [listDevOutbox], router: devS3Router };
  },
});
