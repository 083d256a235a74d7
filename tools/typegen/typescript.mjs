// The TypeScript 5 compiler API, for the project's scripts that read its source
// (scripts/architecture.ts); the project itself compiles with TypeScript 7, which has no such API.
export { default } from "typescript";
