/**
 * pdf-lib's interactive forms (AcroForm fields and their appearances) left out: wrangler.toml's
 * [alias] puts this module in place of `./form/PDFForm` (PDFDocument's import) and of `./form` (the
 * package index's re-export). Our PDFs (src/lib/pdf.ts, the route lists) have no form fields, and
 * `PDFDocument.save` touches the form only when `getForm` was called (~40 KiB of the Worker's
 * script, ~8 KiB gzip). The tests run the whole package (vitest.config.ts leaves relative aliases
 * out), so nothing here hides a use.
 */
const unavailable = (): never => {
  throw new Error("PDF forms are not bundled: src/lib/pdf.ts writes documents without form fields");
};

/** What PDFDocument's form cache builds on `getForm` (`PDFForm.of`): never, in our PDFs. */
export default { of: unavailable };
