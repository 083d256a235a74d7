import { defineModule } from "../../lib/module";
import { getHealth } from "./routes";

export default defineModule({ name: "health", operations: [getHealth] });
