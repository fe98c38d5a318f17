/**
 * test/stall-reporter.ts: a run whose test process freezes (its thread blocked, so vitest's own
 * test deadline never fires) fails within the stall limit, naming the file, and leaves no process
 * behind. (The test itself is named only when vitest heard of its start before the freeze.) In
 * watch mode, vitest staying up after a run is not taken for a hang.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers/node.ts';

function vitest(args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), ...args, '--config', join(ROOT, 'test/fixtures/stall/vitest.config.ts')], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const seen = { out: '' };
  child.stdout.on('data', (d: Buffer) => (seen.out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (seen.out += d.toString()));
  // the streams close only when every process holding them ended: no leftover test process
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, seen, closed };
}

const within = <T>(p: Promise<T>, ms: number) => Promise.race([p, new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), ms).unref())]);

it('ends a frozen run with exit code 1, naming the frozen file, and ends its test processes', async () => {
  const run = vitest(['run'], { HEARTH_TEST_STALL_MS: '3000', CI: 'true', STALL_FIXTURE: 'frozen.fixture.ts' });
  const code = await within(run.closed, 120_000);
  if (code === 'still running') run.child.kill('SIGKILL');
  expect(code).toBe(1);
  expect(run.seen.out).toMatch(/no test started or ended for 0\.1 min; the run is frozen/);
  expect(run.seen.out).toMatch(/frozen\.fixture\.ts/);
}, 150_000);

it('in watch mode, leaves vitest up after the run, past the exit limit', async () => {
  const run = vitest(['watch'], { HEARTH_TEST_EXIT_MS: '1000', CI: 'true', STALL_FIXTURE: 'passes.fixture.ts' });
  try {
    const end = Date.now() + 120_000;
    while (!/1 passed/.test(run.seen.out) && Date.now() < end) await new Promise((r) => setTimeout(r, 100));
    expect(run.seen.out).toMatch(/1 passed/);
    // three times the exit limit after the run: still up, nothing printed about a hang
    expect(await within(run.closed, 3_000)).toBe('still running');
    expect(run.seen.out).not.toMatch(/has not exited/);
  } finally {
    run.child.kill('SIGTERM');
    if ((await within(run.closed, 10_000)) === 'still running') run.child.kill('SIGKILL');
  }
}, 150_000);
