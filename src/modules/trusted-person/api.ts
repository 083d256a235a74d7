/**
 * The trusted-person module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */

export { type ApprovedTrustedPerson, trustedAddressesJson, trustedPeopleJson } from "./approved";
export { RecordId } from "./common";
export { defineTrustedRequests } from "./requests";
