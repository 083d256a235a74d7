/**
 * The school module's face: what other modules may use of it. Everything else in
 * this folder is the module's own.
 */
export { assertOffered, Email, LEVELS, type Level, LevelSchema, notOfferedMessage, readLevels } from "./fields";
export { permissions } from "./permissions";
export { forgetZone, schoolZone } from "./zone";
