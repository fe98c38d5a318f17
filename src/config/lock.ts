/**
 * The node home's lock (issue #25 §1): `<home>/node.lock` records the process that runs the node
 * and, once it listens, its URL. A second node on the same home is refused with one line naming the
 * running one, instead of the store's "Database failed to open". The file is removed when the node
 * stops; a lock left by a process that no longer exists (kill -9, a crash) is taken over, and the
 * caller is told so.
 *
 * Two processes taking over the same stale lock at the same instant could both think they won;
 * the store's own LevelDB lock still stops the second one (docs/decisions.md).
 */
import { readFileSync, rmSync } from 'node:fs';
import { readFile, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join, sep } from 'node:path';

export const LOCK_FILE = 'node.lock';

export interface LockInfo {
  pid: number;
  /** where the node listens, once it does */
  url?: string;
  startedAt?: string;
}

/** `~/.hearth/default` for a path below the user's home directory, else the path as it is. */
export function displayPath(path: string): string {
  const home = homedir();
  return home && (path === home || path.startsWith(home + sep)) ? `~${path.slice(home.length)}` : path;
}

/** Whether a process with this id exists (one of another user counts: EPERM). */
export function processAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export class HomeInUseError extends Error {
  override name = 'HomeInUseError';
  constructor(
    readonly dir: string,
    readonly holder: LockInfo,
  ) {
    super(`home ${displayPath(dir)} is in use by a running node (pid ${holder.pid}, ${holder.url ?? 'still starting'})`);
  }
}

/** The lock's record, or undefined when there is none or it is unreadable. */
export async function readLock(dir: string): Promise<LockInfo | undefined> {
  try {
    const v = JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')) as LockInfo;
    return typeof v?.pid === 'number' ? v : { pid: 0 };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    return { pid: 0 }; // half-written or garbage: nobody holds it
  }
}

/** The running node of a home, if one holds its lock. */
export async function runningNode(dir: string): Promise<LockInfo | undefined> {
  const info = await readLock(dir);
  return info && info.pid !== process.pid && processAlive(info.pid) ? info : undefined;
}

export class HomeLock {
  private released = false;
  /** a `setUrl` write in flight: `release` waits for it, or the write would put the lock back after it */
  private writing: Promise<void> | undefined;
  private readonly onExit = () => this.releaseSync();

  private constructor(
    readonly dir: string,
    private info: LockInfo,
  ) {
    process.once('exit', this.onExit);
  }

  get path(): string {
    return join(this.dir, LOCK_FILE);
  }

  /**
   * Takes the home's lock, or throws {@link HomeInUseError} when a live process holds it.
   * `onStale` hears of a lock taken over from a process that is gone.
   */
  static async acquire(dir: string, opts: { onStale?: (previous: LockInfo) => void } = {}): Promise<HomeLock> {
    const info: LockInfo = { pid: process.pid, startedAt: new Date().toISOString() };
    for (let attempt = 0; attempt < 3; attempt++) {
      try {
        await writeFile(join(dir, LOCK_FILE), `${JSON.stringify(info)}\n`, { flag: 'wx', mode: 0o600 });
        return new HomeLock(dir, info);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      }
      const held = await readLock(dir);
      if (!held) continue; // released meanwhile
      if (held.pid !== process.pid && processAlive(held.pid)) throw new HomeInUseError(dir, held);
      opts.onStale?.(held);
      await rm(join(dir, LOCK_FILE), { force: true });
    }
    throw new Error(`could not take the lock ${join(dir, LOCK_FILE)}: it keeps changing (is another node starting on this home?)`);
  }

  /** Records where the node listens (written whole; the lock is never absent meanwhile). */
  async setUrl(url: string): Promise<void> {
    if (this.released) return;
    this.info = { ...this.info, url };
    this.writing = writeFile(this.path, `${JSON.stringify(this.info)}\n`, { mode: 0o600 });
    await this.writing;
  }

  async release(): Promise<void> {
    if (this.released) return;
    this.released = true;
    await this.writing?.catch(() => undefined);
    if (await this.ours()) await rm(this.path, { force: true });
    process.off('exit', this.onExit);
  }

  /** On process exit: only synchronous work is possible there. */
  releaseSync(): void {
    // no early return on `released`: an exit while `release` is under way (the process ends in the
    // middle of its awaits) must still remove a lock that is this process's
    this.released = true;
    try {
      const v = JSON.parse(readFileSync(this.path, 'utf8')) as LockInfo;
      if (v.pid === process.pid) rmSync(this.path, { force: true });
    } catch {
      /* gone already */
    }
  }

  private async ours(): Promise<boolean> {
    return (await readLock(this.dir))?.pid === process.pid;
  }
}
