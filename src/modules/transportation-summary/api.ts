/**
 * The transportation-summary module's face: what other modules may use of it (the exit
 * permissions' downloads read a permission's targets the way the summary does). Everything else in
 * this folder is the module's own.
 */
export { addressLine, collectorOf, destinationOf, permissionDetail, type Targets, withTargets } from "./ways";
