/**
 * The student module's face: what other modules may use of it. Everything else in this folder is
 * the module's own.
 */
export { type GuardianLink, mayPickUp, type PickUp, pickUpDecision, restrictedOn } from "./guardianship";
