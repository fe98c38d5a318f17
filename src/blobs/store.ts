/**
 * Content-addressed, reference-counted blob storage (admin-wire-a §5.3; domain.md §5.1).
 *
 * Content is cut into 1 MiB chunks; each chunk is a file `<home>/blobs/chunks/<sha256 hex>`. The
 * blob id is SHA-256 of the concatenated 32-byte chunk ids (so an empty blob has no chunks and the
 * id SHA-256("")); the blob hash is SHA-256 of the whole content. Metadata lives in the store:
 * space `blobs` (blob id → {@link BlobMeta}) and `blob_chunks` (chunk id → {refcount}).
 *
 * An upload is consumed as a stream and written chunk by chunk into temporary files (a few chunks
 * at most in flight, never the whole blob). Only when every chunk file is fsynced, moved into place and
 * the metadata batch has committed is the blob visible; an interrupted or rejected upload removes
 * its temporary files, and `open()` clears leftovers of a crash (temp files, chunk files no
 * metadata references). Commits and deletes run one at a time so refcounts never race.
 *
 * Every upload first gets room under the blob quota and the disk reserve (quota.ts): its declared
 * size before any byte is read, else chunk by chunk; past either bound it is refused with 507 and
 * leaves nothing behind.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, unlink, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { Serial } from '../serial.ts';
import { HearthError, badRequest, notFound } from '../errors.ts';
import type { BatchOp, Space, Store } from '../store/store.ts';
import { sniffMime, SNIFF_BYTES } from './mime.ts';
import { BlobQuota, type Grant } from './quota.ts';
import type { BlobQuotaConfig } from '../config/defaults.ts';

export const CHUNK_SIZE = 1024 * 1024;
/** The reference's upload cap (admin-wire-a §5.1: max 1 GiB). */
export const DEFAULT_MAX_BLOB_BYTES = 1024 * 1024 * 1024;

export interface BlobMeta {
  /** bytes, as a decimal string (u64 values are never JS numbers in the store) */
  size: string;
  /** SHA-256 of the whole content, hex */
  hash: string;
  /** chunk ids in order, hex */
  chunks: string[];
  /** uploads of this content not yet deleted */
  refcount: number;
  /** sniffed from the first bytes */
  mime: string;
  /** unix millis of the first upload */
  createdAt: number;
}

interface ChunkMeta {
  /** occurrences across all stored blobs */
  refcount: number;
}

export interface PutOptions {
  /** expected SHA-256 of the whole content (hex); a mismatch rejects the upload with 400 */
  expectedHash?: string;
  /** expected blob id (hex), e.g. for bytes from a peer; a mismatch rejects with 502 */
  expectedId?: string;
  /** the size the sender announced (`Content-Length`): room for it is granted before any byte is read, or 507 */
  declaredBytes?: number;
}

export interface PutResult {
  blobId: string;
  size: number;
  hash: string;
  /** false when the content was already stored and only its refcount grew */
  created: boolean;
}

/** A blob written to temporary files and checked, not yet visible (`BlobStore.stage`). */
export interface StagedBlob {
  blobId: string;
  size: number;
  hash: string;
  chunkIds: string[];
  tmpFiles: string[];
  mime: string;
  /** its room under the quota, given back by `discard` */
  grant?: Grant;
}

/** What one committed change did to the set of stored blobs (`BlobStore.onChange`). */
export interface BlobChanges {
  added: string[];
  removed: string[];
}

export interface ReleaseResult {
  /** references left after this delete */
  refcount: number;
  /** the blob (and its unshared chunks) is gone */
  removed: boolean;
}

const sha256 = () => createHash('sha256');

/** The blob id of a list of chunk ids (hex): SHA-256 of their concatenated bytes. */
export function blobIdOf(chunkIds: string[]): string {
  const h = sha256();
  for (const c of chunkIds) h.update(Buffer.from(c, 'hex'));
  return h.digest('hex');
}

export class BlobStore {
  private readonly blobs: Space<BlobMeta>;
  private readonly chunks: Space<ChunkMeta>;
  private readonly chunkDir: string;
  private readonly tmpDir: string;
  private readonly maxBytes: number;
  private readonly now: () => number;
  /** the disk the blobs may take (quota.ts) */
  readonly quota: BlobQuota;
  /** commits and deletes, one at a time so refcounts never race */
  private readonly serial = new Serial();
  /** told after each commit which blobs appeared and which are gone (`onChange`) */
  private readonly listeners = new Set<(c: BlobChanges) => void>();

  constructor(
    private readonly store: Store,
    readonly dir: string,
    opts: { maxBytes?: number; now?: () => number; quota?: BlobQuotaConfig | BlobQuota } = {},
  ) {
    this.blobs = store.space<BlobMeta>('blobs');
    this.chunks = store.space<ChunkMeta>('blob_chunks');
    this.chunkDir = join(dir, 'chunks');
    this.tmpDir = join(dir, 'tmp');
    this.maxBytes = opts.maxBytes ?? DEFAULT_MAX_BLOB_BYTES;
    this.now = opts.now ?? Date.now;
    this.quota = opts.quota instanceof BlobQuota ? opts.quota : new BlobQuota(dir, opts.quota);
  }

  /**
   * Calls `listener` after each committed change with the blobs it created and those it removed
   * (a reference added to or dropped from a blob that stays is no change); a throwing listener is
   * ignored. The returned function removes it.
   */
  onChange(listener: (c: BlobChanges) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Creates the directories and clears what a crash left behind. Call before serving. */
  async open(): Promise<void> {
    await rm(this.tmpDir, { recursive: true, force: true });
    await mkdir(this.tmpDir, { recursive: true, mode: 0o700 });
    await mkdir(this.chunkDir, { recursive: true, mode: 0o700 });
    for (const name of await readdir(this.chunkDir)) {
      if (!(await this.chunks.get(name))) await rm(join(this.chunkDir, name), { force: true });
    }
    await this.quota.open(this.chunkDir);
  }

  get(blobId: string): Promise<BlobMeta | undefined> {
    return this.blobs.get(blobId);
  }

  /** Root blobs in id order (chunks are never listed). */
  async *list(): AsyncIterable<[string, BlobMeta]> {
    yield* this.blobs.entries();
  }

  /** The content of a stored blob, chunk by chunk from disk. */
  async *read(meta: BlobMeta): AsyncIterable<Uint8Array> {
    for (const chunk of meta.chunks) {
      for await (const piece of createReadStream(join(this.chunkDir, chunk), { highWaterMark: 256 * 1024 })) {
        yield piece as Buffer;
      }
    }
  }

  /**
   * The content of a stored blob as its stored chunks (each at most {@link CHUNK_SIZE}), every one
   * re-hashed against its id first: a chunk damaged on disk throws instead of leaving the node.
   */
  async *readChunks(meta: BlobMeta): AsyncIterable<Uint8Array> {
    for (const chunk of meta.chunks) {
      const bytes = await readFile(join(this.chunkDir, chunk));
      if (sha256().update(bytes).digest('hex') !== chunk) throw new Error(`blob chunk ${chunk} is damaged on disk`);
      yield bytes;
    }
  }

  /** Stores a stream; see the module doc for the durability and visibility rules. */
  async put(source: AsyncIterable<Uint8Array>, opts: PutOptions = {}): Promise<PutResult> {
    const staged = await this.stage(source, opts);
    try {
      const { created: [created] } = await this.change({ add: [staged] });
      return { blobId: staged.blobId, size: staged.size, hash: staged.hash, created };
    } finally {
      await this.discard(staged);
    }
  }

  /**
   * Writes a stream's chunks to temporary files, fsynced, and checks it against `opts`; nothing is
   * visible until the staged blob is committed with {@link change}. {@link discard} it afterwards
   * (committed or not) to remove what was not moved into place.
   */
  async stage(source: AsyncIterable<Uint8Array>, opts: PutOptions = {}): Promise<StagedBlob> {
    if (opts.declaredBytes !== undefined && opts.declaredBytes > this.maxBytes) {
      throw new HearthError('payload_too_large', `Blob of ${opts.declaredBytes} bytes exceeds the maximum size of ${this.maxBytes} bytes`);
    }
    // before any byte is read: a body that cannot fit is refused now, not after it filled the disk
    const grant = await this.quota.grant(opts.declaredBytes ?? 0);
    const upload = randomUUID();
    const tmpFiles: string[] = [];
    const chunkIds: string[] = [];
    const whole = sha256();
    let head: Uint8Array = new Uint8Array(0);
    let total = 0;
    // one chunk is assembled in memory, then written and fsynced while the next one arrives; at most
    // WRITES_IN_FLIGHT chunks wait for the disk, so memory stays bounded whatever the blob's size
    let buf = Buffer.allocUnsafe(CHUNK_SIZE);
    let fill = 0;
    const pending: Promise<void>[] = [];

    const flush = async () => {
      // every earlier chunk was full: what this upload will have written once this one is
      await grant.cover(tmpFiles.length * CHUNK_SIZE + fill);
      const path = join(this.tmpDir, `${upload}.${tmpFiles.length}`);
      tmpFiles.push(path);
      const bytes = buf.subarray(0, fill);
      chunkIds.push(sha256().update(bytes).digest('hex'));
      const write = writeDurably(path, bytes);
      // observed at once: a write that fails (e.g. EMFILE) while an earlier one is awaited must not
      // become an unhandled rejection, which would end the process; it is still awaited below
      write.catch(() => undefined);
      pending.push(write);
      buf = Buffer.allocUnsafe(CHUNK_SIZE);
      fill = 0;
      if (pending.length >= WRITES_IN_FLIGHT) await pending.shift();
    };

    try {
      for await (const piece of source) {
        total += piece.length;
        if (total > this.maxBytes) {
          throw new HearthError('payload_too_large', `Blob exceeds the maximum size of ${this.maxBytes} bytes`);
        }
        whole.update(piece);
        if (head.length < SNIFF_BYTES) head = concat(head, piece.subarray(0, SNIFF_BYTES - head.length));
        let off = 0;
        while (off < piece.length) {
          const n = Math.min(CHUNK_SIZE - fill, piece.length - off);
          buf.set(piece.subarray(off, off + n), fill);
          fill += n;
          off += n;
          if (fill === CHUNK_SIZE) await flush();
        }
      }
      if (fill > 0) await flush();
      await Promise.all(pending.splice(0));

      const hash = whole.digest('hex');
      if (opts.expectedHash !== undefined && opts.expectedHash !== hash) {
        throw badRequest(`Blob hash mismatch: the content hashes to ${hash}, not ${opts.expectedHash}`);
      }
      const blobId = blobIdOf(chunkIds);
      if (opts.expectedId !== undefined && opts.expectedId !== blobId) {
        throw new HearthError('bad_gateway', `Received bytes hash to blob ${blobId}, not the requested ${opts.expectedId}`);
      }
      return { blobId, size: total, hash, chunkIds, tmpFiles, mime: sniffMime(head), grant };
    } catch (err) {
      await Promise.allSettled(pending);
      await Promise.all(tmpFiles.map((p) => rm(p, { force: true })));
      grant.release();
      throw err;
    }
  }

  /** Removes a staged blob's temporary files (those a commit moved into place are gone already). */
  async discard(staged: StagedBlob): Promise<void> {
    staged.grant?.release();
    await Promise.all(staged.tmpFiles.map((p) => rm(p, { force: true })));
  }

  /** Drops one reference; at zero the blob and the chunks no other blob uses are removed. */
  async release(blobId: string): Promise<ReleaseResult> {
    const { released: [result] } = await this.change({ release: [blobId] });
    if (!result) throw notFound(`Blob ${blobId} not found`);
    return result;
  }

  /**
   * One atomic change of the store: a reference for each staged blob (created when new), one
   * reference dropped for each id in `release` (ids not stored are skipped), and `extra` ops of
   * the caller, in ONE store batch. A caller's own record and the blob references it holds thus
   * change together: a crash leaves either both or neither (issue #17 finding 10, application
   * installs). Answers, per staged blob, whether it was new, and per released id that was stored,
   * what is left of it.
   */
  change(c: { add?: StagedBlob[]; release?: string[]; extra?: BatchOp[] }): Promise<{ created: boolean[]; released: ReleaseResult[] }> {
    return this.serial.run(async () => {
      const metas = new Map<string, BlobMeta | null>();
      const chunkCounts = new Map<string, number>();
      const metaOf = async (id: string) => {
        if (!metas.has(id)) metas.set(id, (await this.blobs.get(id)) ?? null);
        return metas.get(id)!;
      };
      const chunkCount = async (id: string) => {
        if (!chunkCounts.has(id)) chunkCounts.set(id, (await this.chunks.get(id))?.refcount ?? 0);
        return chunkCounts.get(id)!;
      };
      const created: boolean[] = [];
      let moved = false;
      let movedBytes = 0;
      for (const up of c.add ?? []) {
        const existing = await metaOf(up.blobId);
        created.push(existing === null);
        if (existing) {
          metas.set(up.blobId, { ...existing, refcount: existing.refcount + 1 });
          continue;
        }
        for (const [chunk, n] of occurrences(up.chunkIds)) {
          const known = await chunkCount(chunk);
          if (known === 0) {
            const at = up.chunkIds.indexOf(chunk);
            await rename(up.tmpFiles[at]!, join(this.chunkDir, chunk));
            movedBytes += chunkSize(up.size, up.chunkIds.length, at);
            moved = true;
          }
          chunkCounts.set(chunk, known + n);
        }
        metas.set(up.blobId, { size: String(up.size), hash: up.hash, chunks: up.chunkIds, refcount: 1, mime: up.mime, createdAt: this.now() });
      }
      if (moved) await syncDir(this.chunkDir);
      // in place from here: counted as stored even if the batch below fails (open() sweeps them)
      this.quota.stored(movedBytes);
      const releases: ReleaseResult[] = [];
      const gone: string[] = [];
      /** sizes of chunks of released blobs, for the quota once their files go */
      const sizes = new Map<string, number>();
      for (const id of c.release ?? []) {
        const meta = await metaOf(id);
        if (!meta) continue;
        if (meta.refcount > 1) {
          metas.set(id, { ...meta, refcount: meta.refcount - 1 });
          releases.push({ refcount: meta.refcount - 1, removed: false });
          continue;
        }
        metas.set(id, null);
        gone.push(id);
        for (const [chunk, n] of occurrences(meta.chunks)) chunkCounts.set(chunk, (await chunkCount(chunk)) - n);
        meta.chunks.forEach((chunk, i) => sizes.set(chunk, chunkSize(Number(meta.size), meta.chunks.length, i)));
        releases.push({ refcount: 0, removed: true });
      }
      const ops: BatchOp[] = [...(c.extra ?? [])];
      const unused: string[] = [];
      for (const [id, meta] of metas) ops.push(meta ? this.blobs.putOp(id, meta) : this.blobs.delOp(id));
      for (const [chunk, n] of chunkCounts) {
        if (n > 0) ops.push(this.chunks.putOp(chunk, { refcount: n }));
        else {
          ops.push(this.chunks.delOp(chunk));
          unused.push(chunk);
        }
      }
      await this.store.batch(ops);
      // after the commit: a crash here leaves unreferenced files, which open() sweeps
      await Promise.all(
        unused.map((chunk) =>
          unlink(join(this.chunkDir, chunk)).then(
            () => this.quota.stored(-(sizes.get(chunk) ?? 0)),
            () => undefined,
          ),
        ),
      );
      const added = [...new Set((c.add ?? []).filter((_, i) => created[i]).map((up) => up.blobId))].filter((id) => metas.get(id));
      const removed = [...new Set(gone)].filter((id) => metas.get(id) === null);
      if (added.length + removed.length > 0) {
        for (const l of [...this.listeners]) {
          try {
            l({ added, removed });
          } catch {
            // a listener's failure is its own: the change is committed
          }
        }
      }
      return { created, released: releases };
    });
  }
}

/** The size of chunk `i` of a blob of `size` bytes cut into `n` chunks: all full but the last. */
function chunkSize(size: number, n: number, i: number): number {
  return i < n - 1 ? CHUNK_SIZE : size - (n - 1) * CHUNK_SIZE;
}

function occurrences(ids: string[]): Map<string, number> {
  const m = new Map<string, number>();
  for (const id of ids) m.set(id, (m.get(id) ?? 0) + 1);
  return m;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

/** chunks written and fsynced concurrently by one upload */
const WRITES_IN_FLIGHT = 8;

/** Writes a new file and fsyncs it: once this resolves, the bytes survive a crash. */
async function writeDurably(path: string, bytes: Uint8Array): Promise<void> {
  const fh = await open(path, 'wx', 0o600);
  try {
    let off = 0;
    while (off < bytes.length) {
      const { bytesWritten } = await fh.write(bytes, off, bytes.length - off);
      off += bytesWritten;
    }
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/** Makes renames into `dir` durable (best effort where directories cannot be opened). */
async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, 'r');
    await fh.sync();
  } catch {
    /* not supported on this platform */
  } finally {
    await fh?.close().catch(() => undefined);
  }
}
