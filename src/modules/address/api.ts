/**
 * The address module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { type Address, AddressRecord, addressFields, toAddress } from "./record";
