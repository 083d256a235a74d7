import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { BULK_QUEUE } from "./queue";

export default defineModule({
  name: "bulk-process",
  paths: [
    "/api/v1/bulk-process",
    "/api/v1/teacher/upload-file",
    "/api/v1/administrative-user/upload-file",
    "/api/v1/family/upload-file",
    "/api/v1/group/upload-file",
    "/api/v1/route-student/upload-file",
    "/api/v1/school/:id/export",
    "/api/v1/user/me/export",
  ],
  permissions,
  load: async () => {
    const [{ listBulkProcesses, getBulkProcess }, routes, uploads, exports] = await Promise.all([
      import("./resource"),
      import("./routes"),
      import("./uploads"),
      import("./export-routes"),
    ]);
    return {
      operations: [
        listBulkProcesses,
        getBulkProcess,
        routes.createBulkProcess,
        routes.updateBulkProcess,
        routes.deleteBulkProcess,
        uploads.uploadTeachersFile,
        uploads.uploadAdministrativeUsersFile,
        uploads.uploadFamiliesFile,
        uploads.uploadGroupsFile,
        uploads.uploadRouteStudentsFile,
        uploads.getBulkProcessTemplate,
        exports.exportSchool,
        exports.getSchoolExport,
        exports.exportMyData,
        exports.getMyExport,
      ],
    };
  },
  jobs: [
    {
      cron: "*/5 * * * *",
      name: "sweep-bulk-processes",
      run: async (deps) => (await import("./service")).sweepBulkProcesses(deps),
    },
  ],
  consumers: { [BULK_QUEUE]: async (deps, message) => (await import("./consumer")).consumeBulkProcess(deps, message) },
});
