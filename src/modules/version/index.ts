import { defineModule } from "../../lib/module";
import { getAppVersion } from "./routes";

export default defineModule({ name: "version", operations: [getAppVersion] });
