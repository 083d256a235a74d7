/**
 * Reading parts of a zip without trusting it (the .xlsx reader's zip layer, on fflate's streaming
 * inflater).
 *
 * A zip's headers are whatever its maker wrote: a 200 KB file can say its part is 1 KB and inflate
 * to gigabytes. So a part that declares more than the caller's limit is refused before inflating,
 * and any other is inflated 16 KB of input at a time, its output bytes counted as they come out of
 * the inflater: reading stops with a `ZipError` as soon as they pass the declared size (so, the
 * limit too). At the end the real size must be the declared one and the CRC-32 must match: a
 * damaged or cut-short part is an error, never a part read in half.
 */
import { Inflate } from "fflate";
import { type Message, m } from "./message";

/** A zip the reader refuses: damaged, too large, not a zip. The message is for the user. */
export class ZipError extends Error {
  override name = "ZipError";
  readonly #text: Message;
  constructor(text: Message) {
    super(text.toString());
    this.#text = text;
  }
  /** The message, to write in the reader's language. */
  get text(): Message {
    return this.#text;
  }
}

/** One part as the central directory lists it (the local header is read when the part is). */
export interface ZipEntry {
  name: string;
  method: number;
  flags: number;
  crc: number;
  compressedSize: number;
  /** The unzipped size the central directory declares. */
  size: number;
  localOffset: number;
}

/**
 * Compressed bytes handed to the inflater at a time. Deflate expands at most ~1032 times, so one
 * push makes at most ~16 MB before the count is checked: the most a part is inflated past its bound.
 */
const INPUT_CHUNK = 16 * 1024;

/** The largest piece passed on at once: what the reader decodes and scans at a time. */
const OUTPUT_CHUNK = 256 * 1024;

const damaged = (detail: Message) => new ZipError(m`The file is damaged: ${detail}`);
const notZip = () => new ZipError(m`The file is not an .xlsx workbook (it could not be unzipped)`);

const view = (b: Uint8Array) => new DataView(b.buffer, b.byteOffset, b.byteLength);
/** Little-endian fields; reading past the end is a zip that is not one. */
const u16 = (b: Uint8Array, at: number) => {
  if (at < 0 || at + 2 > b.length) throw notZip();
  return view(b).getUint16(at, true);
};
const u32 = (b: Uint8Array, at: number) => {
  if (at < 0 || at + 4 > b.length) throw notZip();
  return view(b).getUint32(at, true);
};
/** A little-endian 64-bit field, refused past 2^53 (no real part is that large). */
const u64 = (b: Uint8Array, at: number) => {
  const high = u32(b, at + 4);
  if (high >= 0x200000) throw notZip();
  return high * 0x100000000 + u32(b, at);
};

/** Every part the central directory lists. */
export function zipEntries(zip: Uint8Array): ZipEntry[] {
  // The end of central directory record: 22 bytes plus a comment of at most 65,535.
  let end = -1;
  for (let at = zip.length - 22; at >= Math.max(0, zip.length - 22 - 65_535); at--) {
    if (u32(zip, at) === 0x06054b50) {
      end = at;
      break;
    }
  }
  if (end < 0) throw notZip();
  let count = u16(zip, end + 10);
  let offset = u32(zip, end + 16);
  if ((count === 0xffff || offset === 0xffffffff) && end >= 20 && u32(zip, end - 20) === 0x07064b50) {
    // Zip64: the locator points at the zip64 end record, which holds the real count and offset.
    const record = u64(zip, end - 12);
    if (record + 56 > zip.length || u32(zip, record) !== 0x06064b50) throw notZip();
    count = u64(zip, record + 32);
    offset = u64(zip, record + 48);
  }
  const entries: ZipEntry[] = [];
  const decoder = new TextDecoder();
  let at = offset;
  for (let i = 0; i < count; i++) {
    if (at + 46 > zip.length || u32(zip, at) !== 0x02014b50) throw notZip();
    const nameLength = u16(zip, at + 28);
    const extraLength = u16(zip, at + 30);
    const next = at + 46 + nameLength + extraLength + u16(zip, at + 32);
    if (next > zip.length) throw notZip();
    const entry: ZipEntry = {
      name: decoder.decode(zip.subarray(at + 46, at + 46 + nameLength)),
      flags: u16(zip, at + 8),
      method: u16(zip, at + 10),
      crc: u32(zip, at + 16),
      compressedSize: u32(zip, at + 20),
      size: u32(zip, at + 24),
      localOffset: u32(zip, at + 42),
    };
    // Zip64 sizes and offset, in this order, for each 32-bit field that is 0xFFFFFFFF.
    const extra = zip.subarray(at + 46 + nameLength, at + 46 + nameLength + extraLength);
    for (let e = 0; e + 4 <= extra.length; e += 4 + u16(extra, e + 2)) {
      if (u16(extra, e) !== 1) continue;
      let field = e + 4;
      const take = () => {
        if (field + 8 > e + 4 + u16(extra, e + 2)) throw notZip();
        const value = u64(extra, field);
        field += 8;
        return value;
      };
      if (entry.size === 0xffffffff) entry.size = take();
      if (entry.compressedSize === 0xffffffff) entry.compressedSize = take();
      if (entry.localOffset === 0xffffffff) entry.localOffset = take();
    }
    entries.push(entry);
    at = next;
  }
  return entries;
}

let CRC_TABLE: Int32Array | undefined;
function crcTable(): Int32Array {
  if (CRC_TABLE) return CRC_TABLE;
  CRC_TABLE = new Int32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    CRC_TABLE[i] = c;
  }
  return CRC_TABLE;
}

/** Adds `data` to a running CRC-32 (started at -1, finished with `~crc >>> 0`). */
function crc32(table: Int32Array, crc: number, data: Uint8Array): number {
  let c = crc;
  for (const byte of data) c = (table[(c ^ byte) & 255] ?? 0) ^ (c >>> 8);
  return c;
}

/** The error for a part that declares more than `limit`. */
export type TooLarge = (limit: number) => Error;

/**
 * The unzipped bytes of `entry`, in pieces of at most 256 KB, as they are inflated. Refuses a part
 * that declares more than `limit` (`tooLarge`); stops with a `ZipError` as soon as the bytes out
 * pass the declared size (damaged); when done, checks the size and the CRC-32 against the headers. So what a caller read is known good only once the generator
 * has finished. Stored and deflated parts only (what .xlsx files use).
 */
export function* readEntry(zip: Uint8Array, entry: ZipEntry, limit: number, tooLarge: TooLarge): Generator<Uint8Array> {
  const { name } = entry;
  if (entry.flags & 1) throw new ZipError(m`The file is encrypted (${name}); save it without a password`);
  if (entry.method !== 0 && entry.method !== 8) {
    throw new ZipError(m`${name} uses a compression method .xlsx files do not use (${entry.method})`);
  }
  // The headers may refuse a part (it says it is too large), never admit one.
  if (entry.size > limit) throw tooLarge(limit);
  const local = entry.localOffset;
  if (local + 30 > zip.length || u32(zip, local) !== 0x04034b50) throw damaged(m`${name} has no local header`);
  // Without a data descriptor (flag bit 3) the local header carries the sizes and CRC as well, and
  // they must be the central directory's (0xFFFFFFFF: zip64 sizes in its extra field).
  if (!(u16(zip, local + 6) & 8)) {
    const localSize = u32(zip, local + 22);
    if (u32(zip, local + 14) !== entry.crc || (localSize !== entry.size && localSize !== 0xffffffff)) {
      throw damaged(m`${name}'s local header and central directory disagree`);
    }
  }
  const start = local + 30 + u16(zip, local + 26) + u16(zip, local + 28);
  const stop = start + entry.compressedSize;
  if (stop > zip.length) throw damaged(m`${name} is cut short`);
  const data = zip.subarray(start, stop);

  const table = crcTable();
  let crc = -1;
  let total = 0;
  /**
   * Counts what came out and stops as soon as it passes the declared size, which is at most the
   * limit (refused above otherwise): so the real bytes are bounded by both. Then its pieces.
   */
  const take = (chunks: Uint8Array[]): Uint8Array[] => {
    for (const chunk of chunks) total += chunk.length;
    if (total > entry.size) throw damaged(m`${name} unzips to more than the ${entry.size} bytes its zip header says`);
    const pieces: Uint8Array[] = [];
    for (const chunk of chunks) {
      crc = crc32(table, crc, chunk);
      for (let at = 0; at < chunk.length; at += OUTPUT_CHUNK) pieces.push(chunk.subarray(at, at + OUTPUT_CHUNK));
    }
    return pieces;
  };

  if (entry.method === 0) {
    yield* take([data]);
  } else {
    const out: Uint8Array[] = [];
    const inflater = new Inflate((chunk) => {
      out.push(chunk);
    });
    for (let at = 0; ; at += INPUT_CHUNK) {
      const end = Math.min(at + INPUT_CHUNK, data.length);
      try {
        inflater.push(data.subarray(at, end), end >= data.length);
      } catch (err) {
        // fflate's error code 0: the data ends before the deflate stream does; others: invalid data.
        const code = err instanceof Error && "code" in err ? err.code : undefined;
        throw damaged(code === 0 ? m`${name} is cut short` : m`${name} is corrupt (it cannot be inflated)`);
      }
      yield* take(out.splice(0));
      if (end >= data.length) break;
    }
  }
  if (total !== entry.size) {
    throw damaged(m`${name} unzips to ${total} bytes, not the ${entry.size} its zip header says`);
  }
  if (~crc >>> 0 !== entry.crc) throw damaged(m`${name} fails its checksum (CRC-32)`);
}
