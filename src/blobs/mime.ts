/**
 * The `Content-Type` / `X-Blob-MIME-Type` of a blob (admin-wire-a §5.2): a magic-byte sniff of the
 * first ≤ 512 bytes, `application/octet-stream` when nothing matches.
 */

export const SNIFF_BYTES = 512;
export const DEFAULT_MIME = 'application/octet-stream';

const SIGNATURES: [number[], string][] = [
  [[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'image/png'],
  [[0xff, 0xd8, 0xff], 'image/jpeg'],
  [[0x47, 0x49, 0x46, 0x38], 'image/gif'],
  [[0x25, 0x50, 0x44, 0x46, 0x2d], 'application/pdf'],
  [[0x00, 0x61, 0x73, 0x6d], 'application/wasm'],
  [[0x1f, 0x8b], 'application/gzip'],
  [[0x50, 0x4b, 0x03, 0x04], 'application/zip'],
  [[0x28, 0xb5, 0x2f, 0xfd], 'application/zstd'],
  [[0x42, 0x5a, 0x68], 'application/x-bzip2'],
  [[0x37, 0x7a, 0xbc, 0xaf, 0x27, 0x1c], 'application/x-7z-compressed'],
  [[0x49, 0x44, 0x33], 'audio/mpeg'],
  [[0x4f, 0x67, 0x67, 0x53], 'audio/ogg'],
  [[0x66, 0x4c, 0x61, 0x43], 'audio/x-flac'],
  [[0x1a, 0x45, 0xdf, 0xa3], 'video/webm'],
  [[0x42, 0x4d], 'image/bmp'],
];

const startsWith = (head: Uint8Array, sig: number[], at = 0) =>
  head.length >= at + sig.length && sig.every((b, i) => head[at + i] === b);

const ascii = (head: Uint8Array, from: number, to: number) => String.fromCharCode(...head.subarray(from, to));

export function sniffMime(head: Uint8Array): string {
  for (const [sig, mime] of SIGNATURES) if (startsWith(head, sig)) return mime;
  if (head.length >= 12 && ascii(head, 0, 4) === 'RIFF') {
    const kind = ascii(head, 8, 12);
    if (kind === 'WEBP') return 'image/webp';
    if (kind === 'WAVE') return 'audio/x-wav';
    if (kind === 'AVI ') return 'video/x-msvideo';
  }
  if (head.length >= 12 && ascii(head, 4, 8) === 'ftyp') {
    const brand = ascii(head, 8, 12);
    if (brand.startsWith('avif')) return 'image/avif';
    if (brand.startsWith('heic') || brand.startsWith('heix')) return 'image/heif';
    return 'video/mp4';
  }
  if (head.length >= 262 && ascii(head, 257, 262) === 'ustar') return 'application/x-tar';
  return DEFAULT_MIME;
}
