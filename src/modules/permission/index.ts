import { defineModule } from "../../lib/module";
import { permissions } from "./permissions";
import { createPermission, deletePermission, getPermission, listPermissions, updatePermission } from "./resource";

export default defineModule({
  name: "permission",
  permissions,
  operations: [listPermissions, getPermission, createPermission, updatePermission, deletePermission],
});
