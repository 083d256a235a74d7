import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import {
  createScheduleConfiguration,
  deleteScheduleConfiguration,
  getScheduleConfiguration,
  listScheduleConfigurations,
  updateScheduleConfiguration,
} from "./resource";

export default defineModule({
  name: "schedule-configuration",
  permissions,
  operations: [
    listScheduleConfigurations,
    getScheduleConfiguration,
    createScheduleConfiguration,
    updateScheduleConfiguration,
    deleteScheduleConfiguration,
  ],
});
