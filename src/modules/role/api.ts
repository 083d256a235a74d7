/**
 * The role module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { givableRole, mayActOn, mayAssign, mayTake, SCHOOL_ADMIN_ROLE } from "./grants";
export { permissions } from "./permissions";
