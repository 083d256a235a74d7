import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import {
  createSchoolConfiguration,
  deleteSchoolConfiguration,
  getSchoolConfiguration,
  listSchoolConfigurations,
  updateSchoolConfiguration,
} from "./resource";

export default defineModule({
  name: "school-configuration",
  permissions,
  operations: [
    listSchoolConfigurations,
    getSchoolConfiguration,
    createSchoolConfiguration,
    updateSchoolConfiguration,
    deleteSchoolConfiguration,
  ],
});
