/** The `.d.ts` text for `document` (an OpenAPI 3.x object): `paths`, `components`, `operations`. */
export declare function generate(document: object): Promise<string>;
