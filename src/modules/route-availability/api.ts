/**
 * The route-availability module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */

export { isHoliday, schoolDay } from "./day";
export { type ListChangeKind, ridersChanged } from "./versions";
