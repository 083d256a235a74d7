/**
 * The search fold: how a searched text is stored (each searched column has a `*_search` copy,
 * src/lib/search.ts) and how a search term is compared with it. "JOÃO CONCEIÇÃO", "Joao Conceicao"
 * and "joão conceição" fold alike, and so do "Zoë Müller" and "zoe muller".
 *
 * Compatibility decomposition (NFKD: "é" is e + an accent, "ﬁ" is f i, a full-width "Ａ" is A), the
 * diacritics dropped, recomposed (NFC: a Korean syllable stays one letter), lower case, and the
 * Latin letters that carry their mark inside the letter (ø, ł, đ, ß, æ...) spelt in ASCII. Only the
 * diacritic blocks are dropped: an Indic vowel sign is a letter of the word, not an accent.
 *
 * No dependency: the schema, the seed scripts and the migration generator use it as the app does.
 */

/** Combining diacritical marks (and their supplement, extended and "for symbols" blocks, and half marks). */
const DIACRITICS = /[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f]/g;

/** Letters (lower case) that NFKD leaves alone, spelt as their readers spell them in ASCII. */
const LETTERS: Record<string, string> = {
  ß: "ss",
  æ: "ae",
  œ: "oe",
  ø: "o",
  đ: "d",
  ð: "d",
  ł: "l",
  ı: "i",
  þ: "th",
  ħ: "h",
  ŧ: "t",
  ĸ: "k",
  ŋ: "n",
  ƀ: "b",
  ɓ: "b",
  ƃ: "b",
  ƈ: "c",
  ȼ: "c",
  ɗ: "d",
  ɖ: "d",
  ƌ: "d",
  ȡ: "d",
  ɇ: "e",
  ǝ: "e",
  ə: "e",
  ɛ: "e",
  ƒ: "f",
  ǥ: "g",
  ɠ: "g",
  ɦ: "h",
  ɨ: "i",
  ɉ: "j",
  ƙ: "k",
  ƚ: "l",
  ȴ: "l",
  ɲ: "n",
  ƞ: "n",
  ȵ: "n",
  ɵ: "o",
  ƥ: "p",
  ɋ: "q",
  ɍ: "r",
  ȿ: "s",
  ʂ: "s",
  ƫ: "t",
  ƭ: "t",
  ʈ: "t",
  ȶ: "t",
  ʉ: "u",
  ʋ: "v",
  ƴ: "y",
  ɏ: "y",
  ƶ: "z",
  ȥ: "z",
  ɀ: "z",
  ʐ: "z",
  ʑ: "z",
  // Greek final sigma: "ΣΟΦΊΑΣ" lowers to a final ς, typed σ or ς alike.
  ς: "σ",
  // Apostrophes: O’Brien, Oʼ Neill and O'Brien are one name.
  "\u2019": "'",
  "\u2018": "'",
  "\u02bc": "'",
};
const SPECIAL = new RegExp(`[${Object.keys(LETTERS).join("")}]`, "g");

/** `text` as the search stores and compares it (see the file's comment). */
export function fold(text: string): string {
  return text
    .normalize("NFKD")
    .replace(DIACRITICS, "")
    .normalize("NFC")
    .toLowerCase()
    .replace(SPECIAL, (ch) => LETTERS[ch] ?? ch);
}
