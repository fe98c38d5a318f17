/**
 * bin/hearth.js run as a program (issue #22 memory): its shell line sets MALLOC_ARENA_MAX=2 and
 * MALLOC_TRIM_THRESHOLD_=131072 unless the environment sets them, and replaces itself with node in the same process, so argv, the exit
 * code and signals are the node's own. A probe module (NODE_OPTIONS=--import) reports what the
 * node process sees. Needs the build (dist/), as every spawned node here.
 *
 * Issue #32: the same through npm's bin symlink (an installed `hearth`) and `npm start`; an
 * unsupported Node.js gets one line naming the supported lines; a copy without dist/ says what to do.
 */
import { spawn } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HEARTH_BIN, ROOT } from './helpers/node.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'hearth-bin-'));
  // writes what the node process sees; with HOLD set, holds the process until a signal ends it;
  // with PROBE_EXIT, ends it there (what would run next is a node); FAKE_NODE_VERSION: what
  // process.versions.node says from then on. Only in hearth's process (not in npm's, for `npm start`).
  await writeFile(
    join(dir, 'probe.mjs'),
    `import { writeFileSync } from 'node:fs';
     if (/hearth(\\.js)?$/.test(process.argv[1] ?? '')) {
       writeFileSync(process.env.PROBE_OUT, JSON.stringify({ pid: process.pid, arena: process.env.MALLOC_ARENA_MAX ?? null, trim: process.env.MALLOC_TRIM_THRESHOLD_ ?? null, argv: process.argv.slice(1) }));
       if (process.env.FAKE_NODE_VERSION) Object.defineProperty(process, 'versions', { value: { ...process.versions, node: process.env.FAKE_NODE_VERSION } });
       if (process.env.PROBE_EXIT) process.exit(0);
       if (process.env.HOLD) await new Promise(() => setInterval(() => {}, 1000));
     }\n`,
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

interface Run {
  pid: number;
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  seen: { pid: number; arena: string | null; trim: string | null; argv: string[] };
}

async function run(command: string, args: string[], env: Record<string, string> = {}, onStart?: (pid: number, out: string) => Promise<void>, cwd?: string): Promise<Run> {
  const out = join(dir, `out-${Math.random().toString(36).slice(2)}.json`);
  const base = { ...process.env };
  delete base.MALLOC_ARENA_MAX;
  delete base.MALLOC_TRIM_THRESHOLD_;
  delete base.NODE_OPTIONS;
  const child = spawn(command, args, { cwd, env: { ...base, NODE_OPTIONS: `--import=${join(dir, 'probe.mjs')}`, PROBE_OUT: out, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<[number | null, NodeJS.Signals | null]>((resolve) => child.once('exit', (code, signal) => resolve([code, signal])));
  if (onStart) await onStart(child.pid!, out);
  const [code, signal] = await exited;
  return { pid: child.pid!, code, signal, stdout, stderr, seen: JSON.parse(await readFile(out, 'utf8')) as Run['seen'] };
}

async function waitFor(file: string, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await readFile(file, 'utf8').then((t) => t.length > 0, () => false)) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`no ${file} within ${ms} ms`);
}

describe('bin/hearth.js as a program', () => {
  it('runs node in the same process with MALLOC_ARENA_MAX=2, MALLOC_TRIM_THRESHOLD_=131072 and the arguments as given', async () => {
    const r = await run(HEARTH_BIN, ['--version', 'a b', '$HOME']);
    expect(r.seen.pid).toBe(r.pid); // exec: no shell or second process in between
    expect(r.seen.arena).toBe('2');
    expect(r.seen.trim).toBe('131072');
    expect(r.seen.argv).toEqual([HEARTH_BIN, '--version', 'a b', '$HOME']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('keeps the values the environment sets', async () => {
    const r = await run(HEARTH_BIN, ['--version'], { MALLOC_ARENA_MAX: '4', MALLOC_TRIM_THRESHOLD_: '1048576' });
    expect(r.seen.arena).toBe('4');
    expect(r.seen.trim).toBe('1048576');
  });

  it('exits with the node’s exit code', async () => {
    const direct = await run(process.execPath, [HEARTH_BIN, 'no-such-command']);
    const asProgram = await run(HEARTH_BIN, ['no-such-command']);
    expect(direct.code).not.toBe(0);
    expect(asProgram.code).toBe(direct.code);
    expect(direct.seen.arena).toBeNull(); // `node bin/hearth.js` does not read the shell line
    expect(direct.seen.trim).toBeNull();
  });

  it('a signal to the process reaches node itself', async () => {
    const r = await run(HEARTH_BIN, ['--version'], { HOLD: '1' }, async (pid, out) => {
      await waitFor(out);
      process.kill(pid, 'SIGTERM');
    });
    expect(r.seen.pid).toBe(r.pid);
    expect(r.signal).toBe('SIGTERM');
  });
});

describe('the installed command and npm start (issue #32)', () => {
  it('through a symlink, as npm links an installed package’s bin, it runs with the malloc settings', async () => {
    const link = join(dir, 'hearth');
    await symlink(HEARTH_BIN, link);
    const r = await run(link, ['--version']);
    expect(r.seen.pid).toBe(r.pid);
    expect(r.seen.arena).toBe('2');
    expect(r.seen.trim).toBe('131072');
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });

  it('`npm start` runs bin/hearth.js as a program: `hearth dev` with the malloc settings', { timeout: 60_000 }, async () => {
    // --ignore-scripts skips prestart's build check (the test run built dist/), not start itself
    const r = await run('npm', ['start', '--ignore-scripts', '--silent'], { PROBE_EXIT: '1' }, undefined, ROOT);
    expect(r.code).toBe(0);
    expect(r.seen.arena).toBe('2');
    expect(r.seen.trim).toBe('131072');
    expect(r.seen.argv.slice(1)).toEqual(['dev']);
  });

  it('an unsupported Node.js gets one line naming the supported lines', async () => {
    const r = await run(HEARTH_BIN, ['--version'], { FAKE_NODE_VERSION: '18.20.4' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('hearth: Node.js 18.20.4 is not supported: hearth runs on Node.js 20.19+, 22, 24 or 26\n');
    const older20 = await run(HEARTH_BIN, ['--version'], { FAKE_NODE_VERSION: '20.18.1' });
    expect(older20.code).toBe(1);
    const supported = await run(HEARTH_BIN, ['--version'], { FAKE_NODE_VERSION: '20.19.0' });
    expect(supported.code).toBe(0);
  });

  it('a copy without dist/ names the fix: build in a clone, reinstall an installed package', async () => {
    const installed = join(dir, 'installed');
    await mkdir(join(installed, 'bin'), { recursive: true });
    await copyFile(join(ROOT, 'package.json'), join(installed, 'package.json'));
    await copyFile(HEARTH_BIN, join(installed, 'bin', 'hearth.js'));
    const r = await run(process.execPath, [join(installed, 'bin', 'hearth.js'), '--version']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`hearth: this installation has no dist/ (${installed}/): install the package again\n`);
    await mkdir(join(installed, 'src'));
    await writeFile(join(installed, 'src', 'main.ts'), '');
    const clone = await run(process.execPath, [join(installed, 'bin', 'hearth.js'), '--version']);
    expect(clone.stderr).toBe(`hearth: not built yet: run \`npm run build\` in ${installed}/\n`);
  });
});
