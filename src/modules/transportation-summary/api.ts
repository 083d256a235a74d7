/**
 * The transportation-summary module's face: what other modules may use of it (the exit
 * permissions' downloads read a permission's targets the way the summary does; the dismissal board
 * reads each student's way home of a date, the summary's one rule). Everything else in this folder
 * is the module's own.
 */
export {
  addressLine,
  collectorOf,
  dayDetail,
  destinationOf,
  permissionDetail,
  studentDays,
  type Targets,
  usualRouteOf,
  WAYS,
  type Way,
  wayOf,
  withTargets,
  withUsualStop,
} from "./ways";
