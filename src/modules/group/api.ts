/** The group module's face: what other modules may use of it. */
export { teaches } from "./access";
