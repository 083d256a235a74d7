/** The school levels the product knows, in their order (no imports: schema files use it). */
export const LEVELS = ["preschool", "elementary", "middle", "high"] as const;
export type Level = (typeof LEVELS)[number];
