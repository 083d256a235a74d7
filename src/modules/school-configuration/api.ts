/**
 * The school-configuration module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { assertOrdered, orderedRangeUpdate } from "./range";
export { schoolConfigurationResource } from "./resource";
