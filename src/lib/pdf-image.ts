/**
 * Images a PDF can show, read from the bytes a school uploaded: a JPEG is embedded as it is
 * (DCTDecode); a PNG's compressed data is embedded as it is too when it has no alpha channel
 * (FlateDecode with the PNG predictors, which PDF readers undo), and is decoded and split into
 * colour and a soft mask when it has one. Interlaced PNGs and 16-bit ones with alpha are not read
 * (undefined: the caller leaves the image out). src/lib/pdf.ts makes the image objects of what this
 * reads: pdf-lib's own PNG embedder would decode and deflate again every PNG (with UPNG, ~9 KiB gzip
 * more in the Worker, which wrangler.toml's [alias] leaves out).
 */
import { unzlibSync, zlibSync } from "fflate";

/** An image XObject's entries besides its type, size, length and soft mask (names without their slash). */
export interface ImageDict {
  /** A device colour space, or an indexed one: base space, highest index, the palette's bytes. */
  ColorSpace: string | ["Indexed", "DeviceRGB", number, Uint8Array];
  BitsPerComponent: number;
  Filter: "DCTDecode" | "FlateDecode";
  Decode?: number[];
  DecodeParms?: { Predictor: number; Colors: number; BitsPerComponent: number; Columns: number };
}

export interface PdfImage {
  width: number;
  height: number;
  dict: ImageDict;
  stream: Uint8Array;
  /** The alpha channel as a deflated 8-bit DeviceGray image of the same size. */
  alpha?: Uint8Array;
}

/** Larger than any logo: a bound on what a PNG may inflate to (4 bytes a pixel). */
const MAX_PIXELS = 2048 * 2048;

/** A JPEG or a PNG, or undefined when the bytes are neither (or a kind of PNG this does not read). */
export function readImage(bytes: Uint8Array): PdfImage | undefined {
  return readJpeg(bytes) ?? readPng(bytes);
}

/** A JPEG's size and colour components (from its SOF marker), or undefined when it is not one. */
export function readJpeg(bytes: Uint8Array): PdfImage | undefined {
  if (bytes[0] !== 0xff || bytes[1] !== 0xd8) return undefined;
  let i = 2;
  while (i + 9 < bytes.length) {
    if (bytes[i] !== 0xff) return undefined;
    const marker = bytes[i + 1] ?? 0;
    const length = ((bytes[i + 2] ?? 0) << 8) | (bytes[i + 3] ?? 0);
    // SOF0..SOF15 but DHT (C4), JPG (C8) and DAC (CC).
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) {
      const height = ((bytes[i + 5] ?? 0) << 8) | (bytes[i + 6] ?? 0);
      const width = ((bytes[i + 7] ?? 0) << 8) | (bytes[i + 8] ?? 0);
      const components = bytes[i + 9] ?? 3;
      if (width === 0 || height === 0) return undefined;
      const space = components === 1 ? "DeviceGray" : components === 4 ? "DeviceCMYK" : "DeviceRGB";
      const dict: ImageDict = { ColorSpace: space, BitsPerComponent: 8, Filter: "DCTDecode" };
      // Adobe's CMYK JPEGs are stored inverted.
      if (components === 4) dict.Decode = [1, 0, 1, 0, 1, 0, 1, 0];
      return { width, height, dict, stream: bytes };
    }
    i += 2 + length;
  }
  return undefined;
}

const PNG_SIGNATURE = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
/** Channels by PNG colour type: gray, RGB, palette, gray + alpha, RGBA. */
const CHANNELS: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };

const u32 = (b: Uint8Array, i: number) =>
  (((b[i] ?? 0) << 24) | ((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0)) >>> 0;

export function readPng(bytes: Uint8Array): PdfImage | undefined {
  if (!PNG_SIGNATURE.every((v, i) => bytes[i] === v)) return undefined;
  let width = 0;
  let height = 0;
  let depth = 0;
  let type = -1;
  let interlaced = false;
  let palette: Uint8Array | undefined;
  const data: Uint8Array[] = [];
  for (let i = 8; i + 8 <= bytes.length; ) {
    const length = u32(bytes, i);
    const name = String.fromCharCode(...bytes.subarray(i + 4, i + 8));
    const body = bytes.subarray(i + 8, i + 8 + length);
    if (body.length < length) return undefined;
    if (name === "IHDR") {
      width = u32(body, 0);
      height = u32(body, 4);
      depth = body[8] ?? 0;
      type = body[9] ?? -1;
      interlaced = body[12] === 1;
    } else if (name === "PLTE") palette = body;
    else if (name === "IDAT") data.push(body);
    else if (name === "IEND") break;
    i += 12 + length;
  }
  const channels = CHANNELS[type];
  if (!channels || interlaced || width === 0 || height === 0 || width * height > MAX_PIXELS || data.length === 0) {
    return undefined;
  }
  if (type === 3 && !palette) return undefined;
  const idat = concat(data);
  if (type === 4 || type === 6) return depth === 8 ? splitAlpha(idat, width, height, channels) : undefined;

  const colors = type === 2 ? 3 : 1;
  const space: ImageDict["ColorSpace"] =
    type === 3 && palette
      ? ["Indexed", "DeviceRGB", palette.length / 3 - 1, palette]
      : type === 2
        ? "DeviceRGB"
        : "DeviceGray";
  return {
    width,
    height,
    dict: {
      ColorSpace: space,
      BitsPerComponent: depth,
      Filter: "FlateDecode",
      DecodeParms: { Predictor: 15, Colors: colors, BitsPerComponent: depth, Columns: width },
    },
    stream: idat,
  };
}

/** An 8-bit PNG with alpha, decoded and split into its colour and its alpha, each deflated. */
function splitAlpha(idat: Uint8Array, width: number, height: number, channels: number): PdfImage | undefined {
  const stride = width * channels;
  const expected = height * (stride + 1);
  let raw: Uint8Array;
  try {
    // Into a buffer of the size the header promises: a stream that inflates to more is cut, not grown.
    raw = unzlibSync(idat, { out: new Uint8Array(expected) });
  } catch {
    return undefined;
  }
  if (raw.length < expected) return undefined;
  const pixels = unfilter(raw, stride, height, channels);
  if (!pixels) return undefined;
  const colors = channels - 1;
  const color = new Uint8Array(width * height * colors);
  const alpha = new Uint8Array(width * height);
  for (let p = 0, c = 0; p < width * height; p++) {
    for (let k = 0; k < colors; k++) color[c++] = pixels[p * channels + k] ?? 0;
    alpha[p] = pixels[p * channels + colors] ?? 0;
  }
  return {
    width,
    height,
    dict: { ColorSpace: colors === 3 ? "DeviceRGB" : "DeviceGray", BitsPerComponent: 8, Filter: "FlateDecode" },
    stream: zlibSync(color),
    alpha: zlibSync(alpha),
  };
}

/** Undoes PNG's per-row filters (None, Sub, Up, Average, Paeth); undefined on an unknown filter. */
function unfilter(raw: Uint8Array, stride: number, height: number, bpp: number): Uint8Array | undefined {
  const out = new Uint8Array(stride * height);
  for (let y = 0; y < height; y++) {
    const filter = raw[y * (stride + 1)];
    const row = y * (stride + 1) + 1;
    const at = y * stride;
    for (let x = 0; x < stride; x++) {
      const v = raw[row + x] ?? 0;
      const left = x >= bpp ? (out[at + x - bpp] ?? 0) : 0;
      const up = y > 0 ? (out[at - stride + x] ?? 0) : 0;
      const upLeft = x >= bpp && y > 0 ? (out[at - stride + x - bpp] ?? 0) : 0;
      let predicted: number;
      if (filter === 0) predicted = 0;
      else if (filter === 1) predicted = left;
      else if (filter === 2) predicted = up;
      else if (filter === 3) predicted = (left + up) >> 1;
      else if (filter === 4) predicted = paeth(left, up, upLeft);
      else return undefined;
      out[at + x] = (v + predicted) & 0xff;
    }
  }
  return out;
}

function paeth(a: number, b: number, c: number): number {
  const p = a + b - c;
  const pa = Math.abs(p - a);
  const pb = Math.abs(p - b);
  const pc = Math.abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

function concat(parts: readonly Uint8Array[]): Uint8Array {
  if (parts.length === 1 && parts[0]) return parts[0];
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}
