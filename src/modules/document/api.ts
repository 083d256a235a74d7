/**
 * The document module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { DocumentRecord, documentResource, EXPORT_ENTITIES } from "./resource";
export { SIGNED_URL_SECONDS } from "./signed-url";
