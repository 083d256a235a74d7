/**
 * The part of fontkit 3 that src/lib/pdf.ts uses (the package ships no types; @types/fontkit
 * describes fontkit 2, which has neither `fontkit/core` nor the format and shaper entries).
 */
declare module "fontkit/core" {
  export interface Subset {
    /** Adds a glyph (or glyph id) and answers its id in the subset. */
    includeGlyph(glyph: unknown): number;
    /** The subset as a font program for PDF embedding. */
    encode(): Uint8Array;
  }
  export interface Font {
    hasGlyphForCodePoint(codePoint: number): boolean;
    createSubset(): Subset;
    /** The glyph of a character (its `.notdef` when the font has none). */
    glyphForCodePoint(codePoint: number): unknown;
    /** Shapes `text` (the glyph run pdf-lib reads). */
    layout(text: string, features?: object): unknown;
  }
  export function create(buffer: Uint8Array, postscriptName?: string): Font;
  export function registerFormat(format: unknown): void;
  export function registerShaper(shaper: unknown, scripts?: string[]): void;
}

declare module "fontkit/formats/TTFFont" {
  export const TTFFont: unknown;
}

declare module "fontkit/shapers/ArabicShaper" {
  export const ArabicShaper: unknown;
}
