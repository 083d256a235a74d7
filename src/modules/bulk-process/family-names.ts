/** The names a families file may give a relationship or a level in (English and Spanish). */
import type { Level } from "../../lib/levels";

export const RELATIONSHIPS = ["mother", "father", "guardian", "grandparent", "other"] as const;
export type Relationship = (typeof RELATIONSHIPS)[number];
export const relationshipOf = (v: unknown): Relationship | null => RELATIONSHIPS.find((r) => r === v) ?? null;
export const RELATIONSHIP_NAMES: Record<string, Relationship> = {
  mother: "mother",
  mom: "mother",
  madre: "mother",
  mama: "mother",
  father: "father",
  dad: "father",
  padre: "father",
  papa: "father",
  guardian: "guardian",
  tutor: "guardian",
  tutora: "guardian",
  grandparent: "grandparent",
  abuelo: "grandparent",
  abuela: "grandparent",
  other: "other",
  otro: "other",
  otra: "other",
};

export const LEVEL_NAMES: Record<string, Level> = {
  preschool: "preschool",
  preescolar: "preschool",
  kinder: "preschool",
  elementary: "elementary",
  primaria: "elementary",
  middle: "middle",
  secundaria: "middle",
  high: "high",
  preparatoria: "high",
  bachillerato: "high",
};
