/**
 * test/stall-reporter.ts: a run whose test process freezes (its thread blocked, so vitest's own
 * test deadline never fires) fails within the stall limit, naming the file, and leaves no process
 * behind. (The test itself is named only when vitest heard of its start before the freeze.)
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers/node.ts';

it('ends a frozen run with exit code 1, naming the frozen file, and ends its test processes', async () => {
  const child = spawn(process.execPath, [join(ROOT, 'node_modules/vitest/vitest.mjs'), 'run', '--config', join(ROOT, 'test/fixtures/stall/vitest.config.ts')], {
    cwd: ROOT,
    env: { ...process.env, HEARTH_TEST_STALL_MS: '3000', CI: 'true' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  // the streams close only when every process holding them ended: no leftover test process
  const closed = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  const deadline = new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 120_000).unref());
  const code = await Promise.race([closed, deadline]);
  if (code === 'still running') child.kill('SIGKILL');
  expect(code).toBe(1);
  expect(out).toMatch(/no test started or ended for 0\.1 min; the run is frozen/);
  expect(out).toMatch(/frozen\.fixture\.ts/);
}, 150_000);
