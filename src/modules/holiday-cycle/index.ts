import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import {
  createSchoolHolidayCycle,
  deleteSchoolHolidayCycle,
  getSchoolHolidayCycle,
  listSchoolConfigurationHolidayCycles,
  listSchoolHolidayCycles,
  updateSchoolHolidayCycle,
} from "./resource";

export default defineModule({
  name: "holiday-cycle",
  permissions,
  operations: [
    listSchoolHolidayCycles,
    getSchoolHolidayCycle,
    createSchoolHolidayCycle,
    updateSchoolHolidayCycle,
    deleteSchoolHolidayCycle,
    listSchoolConfigurationHolidayCycles,
  ],
});
