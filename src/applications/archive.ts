/**
 * The `.mpk` container (runtime.md §1 "Container"): a gzip-compressed tar. Reading enforces the
 * reference's caps — `manifest.json` at most 1 MiB and within the first 8 MiB of the decompressed
 * stream, the whole archive at most 512 MiB decompressed — and keeps every regular file in memory
 * by its normalised name (a leading `./` dropped). Entries are never written to disk, so a hostile
 * entry name cannot escape anywhere; manifest paths are checked separately (manifest.ts).
 */
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, gzipSync } from 'node:zlib';
import { extract, pack } from 'tar-stream';
import { HearthError, badRequest } from '../errors.ts';
import { MAX_BUNDLE_BYTES, MAX_MANIFEST_BYTES, MAX_MANIFEST_SCAN_BYTES } from './constants.ts';

export const MANIFEST_NAME = 'manifest.json';
const TAR_BLOCK = 512;

export interface ArchiveLimits {
  maxManifestBytes?: number;
  maxManifestScanBytes?: number;
  maxTotalBytes?: number;
}

const normalise = (name: string) => name.replace(/^(\.\/)+/, '');

/**
 * How to turn a raw wasm into something a node installs (issue #34 §2): the node installs signed
 * bundles only (admin spec, install rules), so a refusal of a `.wasm` names the command that signs one.
 */
export const BUNDLE_FIX = 'bundle it first: hearth app bundle --wasm <file> --package <name> --version <semver> --key <signing key>';

/** A WebAssembly binary module starts with `\0asm`. */
export const isRawWasm = (bytes: Uint8Array): boolean => bytes.length >= 4 && bytes[0] === 0 && bytes[1] === 0x61 && bytes[2] === 0x73 && bytes[3] === 0x6d;

/** Reads an `.mpk`'s files. 400 for anything that is not a well-formed bundle archive. */
export async function readArchive(bytes: Uint8Array, limits: ArchiveLimits = {}): Promise<Map<string, Buffer>> {
  const maxManifest = limits.maxManifestBytes ?? MAX_MANIFEST_BYTES;
  const maxScan = limits.maxManifestScanBytes ?? MAX_MANIFEST_SCAN_BYTES;
  const maxTotal = limits.maxTotalBytes ?? MAX_BUNDLE_BYTES;
  if (isRawWasm(bytes)) throw badRequest(`not a signed application bundle (.mpk): this is a raw WebAssembly module; ${BUNDLE_FIX}`);
  if (bytes.length < 2 || bytes[0] !== 0x1f || bytes[1] !== 0x8b) {
    throw badRequest('not a signed application bundle (.mpk): the file is not a gzip archive');
  }
  const files = new Map<string, Buffer>();
  let consumed = 0; // decompressed tar bytes before the current entry's data (headers approximated per block)
  const tar = extract();
  const read = (async () => {
    for await (const entry of tar) {
      const name = normalise(entry.header.name);
      const size = entry.header.size ?? 0;
      consumed += TAR_BLOCK;
      if (consumed + size > maxTotal) throw new HearthError('payload_too_large', `bundle exceeds ${maxTotal} bytes decompressed`);
      const isFile = entry.header.type === 'file' || entry.header.type === 'contiguous-file';
      if (name === MANIFEST_NAME) {
        if (!isFile) throw badRequest('bundle: manifest.json is not a regular file');
        if (size > maxManifest) throw badRequest(`bundle: manifest.json is ${size} bytes, above the ${maxManifest}-byte limit`);
        if (consumed > maxScan) throw badRequest(`bundle: manifest.json is not within the first ${maxScan} bytes of the archive`);
      }
      if (isFile && files.has(name)) {
        throw badRequest(name === MANIFEST_NAME ? 'bundle: contains more than one manifest.json' : `bundle: contains ${JSON.stringify(name)} twice`);
      }
      const chunks: Buffer[] = [];
      for await (const chunk of entry) chunks.push(chunk as Buffer);
      consumed += Math.ceil(size / TAR_BLOCK) * TAR_BLOCK;
      if (isFile) files.set(name, Buffer.concat(chunks));
    }
  })();
  const gunzip = createGunzip();
  let inflated = 0;
  gunzip.on('data', (c: Buffer) => {
    inflated += c.length;
    if (inflated > maxTotal + 64 * 1024) gunzip.destroy(new HearthError('payload_too_large', `bundle exceeds ${maxTotal} bytes decompressed`));
  });
  try {
    await Promise.all([pipeline(Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length)]), gunzip, tar), read]);
  } catch (err) {
    tar.destroy();
    if (err instanceof HearthError) throw err;
    throw badRequest(`not a signed application bundle (.mpk): the archive is unreadable (${(err as Error).message})`);
  }
  if (!files.has(MANIFEST_NAME)) throw badRequest('not a signed application bundle (.mpk): no top-level manifest.json');
  return files;
}

/** Packs files into a deterministic gzip tar (fixed mtime and modes, the given order). */
export async function writeArchive(files: Array<[name: string, bytes: Uint8Array]>): Promise<Buffer> {
  const p = pack();
  const out: Buffer[] = [];
  const collected = (async () => {
    for await (const chunk of p) out.push(chunk as Buffer);
  })();
  for (const [name, bytes] of files) {
    await new Promise<void>((resolve, reject) =>
      p.entry({ name, size: bytes.length, mode: 0o644, mtime: new Date(0), type: 'file' }, Buffer.from(bytes), (err) => (err ? reject(err) : resolve())),
    );
  }
  p.finalize();
  await collected;
  return gzipSync(Buffer.concat(out), { level: 9 });
}
