import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { getCronHistory, listCronHistories } from "./resource";

export default defineModule({ name: "cron-history", permissions, operations: [listCronHistories, getCronHistory] });
