/**
 * The teacher module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { permissions } from "./permissions";
export {
  joinPerson,
  notRemoved,
  notRemovedHere,
  PersonRecord,
  personFields,
  personFilters,
  personRecord,
  staffCells,
  staffColumns,
  staffOperations,
} from "./staff";
