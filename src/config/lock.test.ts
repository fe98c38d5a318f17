import { spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { displayPath, HomeInUseError, HomeLock, LOCK_FILE, readLock, runningNode } from './lock.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-lock-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

/** a pid that surely names no process: one that just exited */
function deadPid(): number {
  return Number(spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout);
}

describe('HomeLock', () => {
  it('records the pid (0600), then the URL, and removes the file on release', async () => {
    const lock = await HomeLock.acquire(dir);
    expect(((await stat(join(dir, LOCK_FILE))).mode & 0o777).toString(8)).toBe('600');
    expect((await readLock(dir))?.pid).toBe(process.pid);
    await lock.setUrl('http://127.0.0.1:2528');
    expect(await readLock(dir)).toMatchObject({ pid: process.pid, url: 'http://127.0.0.1:2528' });
    await lock.release();
    expect(await readLock(dir)).toBeUndefined();
  });

  it('a release while the URL is being written leaves no lock behind (the write does not put it back)', async () => {
    for (let i = 0; i < 20; i++) {
      const lock = await HomeLock.acquire(dir);
      const writing = lock.setUrl('http://127.0.0.1:2528');
      await lock.release();
      await writing;
      expect(await readLock(dir)).toBeUndefined();
      await lock.setUrl('http://127.0.0.1:2529'); // after release: nothing written
      expect(await readLock(dir)).toBeUndefined();
    }
  });

  it('refuses a home a live process holds, naming its pid and URL', async () => {
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid, url: 'http://127.0.0.1:2600' }));
    const err = await HomeLock.acquire(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(HomeInUseError);
    expect((err as Error).message).toBe(`home ${displayPath(dir)} is in use by a running node (pid ${process.ppid}, http://127.0.0.1:2600)`);
    expect((await runningNode(dir))?.pid).toBe(process.ppid);
  });

  it('takes over a lock left by a process that is gone, and says so', async () => {
    const pid = deadPid();
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid, url: 'http://127.0.0.1:2528' }));
    const stale: number[] = [];
    const lock = await HomeLock.acquire(dir, { onStale: (p) => stale.push(p.pid) });
    expect(stale).toEqual([pid]);
    expect(JSON.parse(await readFile(join(dir, LOCK_FILE), 'utf8')).pid).toBe(process.pid);
    expect(await runningNode(dir)).toBeUndefined(); // our own lock is not "another running node"
    await lock.release();
  });

  it('takes over a garbage lock file', async () => {
    await writeFile(join(dir, LOCK_FILE), '{"pid":');
    const lock = await HomeLock.acquire(dir);
    expect((await readLock(dir))?.pid).toBe(process.pid);
    await lock.release();
  });

  it('release leaves a lock that another process took', async () => {
    const lock = await HomeLock.acquire(dir);
    await writeFile(join(dir, LOCK_FILE), JSON.stringify({ pid: process.ppid }));
    await lock.release();
    expect((await readLock(dir))?.pid).toBe(process.ppid);
  });
});

it('displayPath shortens paths below the home directory', () => {
  expect(displayPath(join(homedir(), '.hearth', 'default'))).toBe('~/.hearth/default');
  expect(displayPath('/srv/hearth')).toBe('/srv/hearth');
});
