/**
 * The delegate module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export {
  actedFor,
  actedForBy,
  actingFor,
  actingLoader,
  delegatedMemberships,
  delegationsHere,
  delegationsQuery,
} from "./acting";
