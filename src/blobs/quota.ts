/**
 * How much disk the blob store may take (issue #37 item 1; docs/security.md "Disk"). A client key
 * holding only `blob` once streamed a 400 MiB upload into a home on a 300 MiB filesystem: the disk
 * filled, and with it the room every other write of the node needs. Two bounds now hold:
 *
 * - a **quota**: the bytes of stored chunks plus the uploads in flight never exceed
 *   `[blobs] quota_bytes` (0 = derived at each start: `quota_free_percent` of the free space left
 *   after the reserve, plus what the blobs already hold);
 * - a **reserve**: a blob write never leaves the filesystem with less than `[blobs] disk_reserve_bytes`
 *   free (0 = derived: 5 % of the filesystem, at least 32 MiB, at most 1 GiB), so governance ops,
 *   context state, keys and logs still have room after blobs took all they may.
 *
 * An upload reserves its declared size (`Content-Length`) before any byte is read, so a body that
 * cannot fit is refused at once with 507 naming the bound; an upload of unknown size reserves as it
 * goes, one chunk at a time. Concurrent uploads count each other's reservations.
 */
import { readdir, stat, statfs } from 'node:fs/promises';
import { join } from 'node:path';
import { HearthError } from '../errors.ts';
import type { GaugeSource } from '../http/metrics.ts';
import { BLOB_QUOTA_DEFAULTS, type BlobQuotaConfig } from '../config/defaults.ts';

const MiB = 1024 * 1024;
/** the derived reserve: this share of the filesystem, within these bounds */
const RESERVE_SHARE = 0.05;
const RESERVE_MIN = 32 * MiB;
const RESERVE_MAX = 1024 * MiB;

export const REFUSAL_REASONS = ['quota', 'disk'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

/** Free and total bytes of the filesystem holding `path` (what an unprivileged process may use). */
export interface DiskSpace {
  free: number;
  size: number;
}

export async function diskSpaceOf(path: string): Promise<DiskSpace> {
  const s = await statfs(path);
  return { free: s.bavail * s.bsize, size: s.blocks * s.bsize };
}

/** The reserve to keep: configured, or 5 % of the filesystem within [32 MiB, 1 GiB]. */
export function resolveReserve(configured: number, fsSize: number): number {
  if (configured > 0) return configured;
  return Math.min(RESERVE_MAX, Math.max(RESERVE_MIN, Math.floor(fsSize * RESERVE_SHARE)));
}

/** The quota to apply: configured, or what is stored plus the configured share of the free space beyond the reserve. */
export function resolveQuota(c: BlobQuotaConfig, used: number, disk: DiskSpace, reserve: number): number {
  if (c.quotaBytes > 0) return c.quotaBytes;
  const percent = Math.min(100, Math.max(1, c.quotaFreePercent));
  return used + Math.floor((Math.max(0, disk.free - reserve) * percent) / 100);
}

/** Bytes in words for messages people read. */
export function bytesText(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < MiB) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 * MiB) return `${(n / MiB).toFixed(1)} MiB`;
  return `${(n / (1024 * MiB)).toFixed(2)} GiB`;
}

/** Room granted to one upload; grows chunk by chunk when its size was not declared. Release it once the upload ends. */
export interface Grant {
  /** makes sure `total` bytes of this upload fit (throws 507 naming the bound otherwise) */
  cover(total: number): Promise<void>;
  /** gives back what was not written into the store (call once, committed or not) */
  release(): void;
}

export class BlobQuota {
  private used = 0;
  private quota = Number.MAX_SAFE_INTEGER;
  private reserve = 0;
  /** bytes granted to uploads in flight and not yet committed */
  private granted = 0;
  private readonly refused = new Map<RefusalReason, number>(REFUSAL_REASONS.map((r) => [r, 0]));

  constructor(
    private readonly dir: string,
    private readonly config: BlobQuotaConfig = BLOB_QUOTA_DEFAULTS,
    /** the filesystem's space (tests pass a fake disk) */
    private readonly disk: (path: string) => Promise<DiskSpace> = diskSpaceOf,
  ) {}

  /** Counts the chunks already stored and resolves the quota and the reserve. */
  async open(chunkDir: string): Promise<void> {
    let used = 0;
    for (const name of await readdir(chunkDir)) used += await stat(join(chunkDir, name)).then((s) => s.size, () => 0);
    this.used = used;
    const disk = await this.disk(this.dir);
    this.reserve = resolveReserve(this.config.diskReserveBytes, disk.size);
    this.quota = resolveQuota(this.config, used, disk, this.reserve);
  }

  /** Chunk files moved into the store (+) or removed from it (−). */
  stored(delta: number): void {
    this.used = Math.max(0, this.used + delta);
  }

  /** Room for an upload: `declared` bytes at once (0 when unknown), more later through {@link Grant.cover}. */
  async grant(declared: number): Promise<Grant> {
    let mine = 0;
    let released = false;
    const take = async (bytes: number) => {
      if (bytes <= 0) return;
      this.checkQuota(bytes, mine);
      // taken before the disk is asked (an await): a concurrent upload's check already counts it
      mine += bytes;
      this.granted += bytes;
      try {
        await this.checkDisk(bytes, mine);
      } catch (err) {
        mine -= bytes;
        this.granted -= bytes;
        throw err;
      }
    };
    await take(declared);
    return {
      cover: async (total) => {
        if (released) throw new Error('blob grant used after release');
        // a stream without a declared size asks once per chunk it writes
        if (total > mine) await take(total - mine);
      },
      release: () => {
        if (released) return;
        released = true;
        this.granted -= mine;
        mine = 0;
      },
    };
  }

  private checkQuota(bytes: number, already: number): void {
    const inFlight = this.granted;
    if (this.used + inFlight + bytes > this.quota) {
      this.count('quota');
      const left = Math.max(0, this.quota - this.used - inFlight);
      throw new HearthError(
        'insufficient_storage',
        `The blob store's quota is full: ${bytesText(this.used)} stored and ${bytesText(inFlight)} being uploaded of ${bytesText(this.quota)} ([blobs] quota_bytes); ` +
          `this upload needs ${bytesText(already + bytes)}, ${bytesText(left + already)} is left`,
      );
    }
  }

  /** `mine`: this upload's grant, `bytes` of it new */
  private async checkDisk(bytes: number, mine: number): Promise<void> {
    const { free } = await this.disk(this.dir);
    // what other uploads were granted will come off the free space too (written or not: a margin)
    if (free - (this.granted - mine) - bytes < this.reserve) {
      this.count('disk');
      throw new HearthError(
        'insufficient_storage',
        `The disk holding the node's blobs is nearly full: ${bytesText(free)} free, and ${bytesText(this.reserve)} stay reserved for the node's store and logs ([blobs] disk_reserve_bytes); ` +
          `this upload needs ${bytesText(mine)}`,
      );
    }
  }

  private count(reason: RefusalReason): void {
    this.refused.set(reason, (this.refused.get(reason) ?? 0) + 1);
  }

  /** what the store holds, may hold, and keeps free (tests, metrics) */
  get state(): { used: number; quota: number; reserve: number; granted: number } {
    return { used: this.used, quota: this.quota, reserve: this.reserve, granted: this.granted };
  }

  refusedBy(reason: RefusalReason): number {
    return this.refused.get(reason) ?? 0;
  }

  /** `/metrics`: blob bytes, quota, in flight, the disk's free space and reserve, refusals by reason. */
  series(): GaugeSource[] {
    return [
      { name: 'hearth_blob_bytes', help: 'Bytes of blob chunks stored', read: () => [{ value: this.used }] },
      { name: 'hearth_blob_quota_bytes', help: 'Bytes the blob store may hold ([blobs] quota_bytes, or derived at start)', read: () => [{ value: this.quota }] },
      { name: 'hearth_blob_uploading_bytes', help: 'Bytes granted to blob uploads in flight', read: () => [{ value: this.granted }] },
      {
        name: 'hearth_disk_free_bytes',
        help: 'Free bytes on the filesystem holding the blobs; blob writes stop at the reserve',
        read: async () => [{ value: await this.disk(this.dir).then((d) => d.free, () => 0) }],
      },
      { name: 'hearth_disk_reserve_bytes', help: 'Free bytes blob writes leave for the store and logs ([blobs] disk_reserve_bytes)', read: () => [{ value: this.reserve }] },
      {
        name: 'hearth_blob_refused_total',
        help: 'Blob writes refused with 507, by the bound they met (quota, disk reserve)',
        type: 'counter',
        read: () => REFUSAL_REASONS.map((reason) => ({ labels: { reason }, value: this.refusedBy(reason) })),
      },
    ];
  }
}
