/**
 * The route-availability module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */

// For exit permissions: a confirmed permission's changes to route days, in its own batch.
export { baseRiders, dayFields, riding, seatsOf } from "./day";
// For the bus run (transport): who is on a route's final list today.
export { type FinalList, type ListStudent, listStanding, readFinalLists } from "./final-list";
export { type ListChangeKind, listChange, nextVersion, ridersChanged, stampVersion } from "./versions";
