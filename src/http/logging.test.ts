/**
 * A log that cannot be written never stops the node (logging.ts, issue #37 item 1). A child process
 * logs through `createLogger` with its standard output on a full 1 MiB filesystem (a tmpfs this test
 * mounts: root only, skipped saying why otherwise), keeps logging, and must stay responsive and exit
 * normally.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';

const LOGGING = fileURLToPath(new URL('./logging.ts', import.meta.url));
const CHILD = `
const { createLogger } = await import(${JSON.stringify(LOGGING)});
const log = createLogger('info');
for (let i = 0; i < 5000; i++) log.info({ i, pad: 'x'.repeat(400) }, 'filling the disk');
let ticks = 0;
const t = setInterval(() => { ticks++; log.info({ ticks }, 'still logging'); }, 10);
setTimeout(() => { clearInterval(t); process.stderr.write('alive ' + ticks + '\\n'); }, 1500);
`;

let dir = '';
let skip: string | undefined;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-full-log-'));
  if (process.getuid?.() !== 0) skip = 'not root: mounting a small filesystem needs root';
  else {
    try {
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir], { stdio: 'pipe' });
    } catch (err) {
      skip = `mount -t tmpfs failed: ${String((err as { stderr?: Buffer }).stderr ?? err).trim()}`;
    }
  }
});
afterAll(async () => {
  if (!skip) execFileSync('umount', ['-l', dir], { stdio: 'pipe' });
  await rm(dir, { recursive: true, force: true });
});

it('logging to standard output on a full disk neither kills nor stalls the process', async (ctx) => {
  if (skip) return ctx.skip(skip);
  const out = await open(join(dir, 'node.log'), 'w');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { stdio: ['ignore', out.fd, 'pipe'] });
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
      child.on('exit', (c) => (clearTimeout(timer), resolve(c)));
    });
    expect(err).toMatch(/alive \d+/);
    expect(Number(err.match(/alive (\d+)/)?.[1])).toBeGreaterThan(50); // the event loop kept turning
    expect(code).toBe(0);
  } finally {
    await out.close();
  }
}, 60_000);
