/**
 * The user module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { contactOf, MASKED_CONTACT } from "./contact";
export { columnsAs, copyJoin, copyOf, copyOnAdd, copyTable, editPerson, identity, nameContains } from "./identity";
export { FirstName, giveRole, LastName, roleUserAudit, takenRoleAudits, userAudit } from "./people";
export { permissions } from "./permissions";
export {
  type Added,
  type AddOptions,
  addPeople,
  addPerson,
  giveRoles,
  type Known,
  knownBy,
  knownPeople,
  type Person,
  peopleByPhone,
  personEdit,
} from "./person";
export { toUser, UserSchema } from "./record";
