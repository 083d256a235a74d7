/**
 * The family module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { DEFAULT_PARENT_LIMIT, parentLimit } from "./record";
