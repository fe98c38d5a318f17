/**
 * Benchmark (issue #14): what a user waits for and what an idle node holds, against plain
 * `node -e` measured the same way in the same run.
 *
 * - Cold start: process spawn to the first 200 on `GET /admin-api/health` of a node whose home
 *   exists (its admin provisioned by an earlier start), against spawning `node -e` with a
 *   node:http server to its first 200, polled the same way. Median of BENCH_STARTS (default 5).
 *   Goal: < 1 s.
 * - Idle RSS: the node's resident set (main thread and workers) 3 s after its start, against the
 *   baseline server's. Goal (issue #22): < 100 MB idle (and < 150 MB after load: bench/restart.ts,
 *   which also measures a node with applications and contexts).
 * - CLI latency: `hearth health` against a running node, spawn to exit, against `node -e 0`.
 *   Median of BENCH_CLI_RUNS (default 10). Goal: < 300 ms.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { HEARTH_BIN, makeHome } from '../test/helpers/node.ts';
import { ADMIN_ENV, ensureBuilt, loadNote, median, rows, rssMB } from './harness.ts';

const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 10);
const IDLE_SETTLE_MS = 3_000;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` until it answers 200; the milliseconds since `t0`. */
async function firstOk(url: string, t0: number, child: ChildProcess): Promise<number> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the process exited with ${child.exitCode} before answering`);
    const ok = await fetch(url).then(
      (r) => r.status === 200,
      () => false,
    );
    if (ok) return performance.now() - t0;
    await new Promise((r) => setTimeout(r, 2));
  }
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

/** Spawn to first 200, and the resident set once idle. */
async function startOnce(argv: string[], url: (port: number) => string, env: NodeJS.ProcessEnv, idleRss: boolean): Promise<{ ms: number; rss?: number }> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, argv.map((a) => a.replace('$PORT', String(port))), { env: { ...process.env, ...env }, stdio: 'ignore' });
  try {
    const ms = await firstOk(url(port), t0, child);
    if (!idleRss) return { ms };
    await new Promise((r) => setTimeout(r, IDLE_SETTLE_MS));
    return { ms, rss: await rssMB(child.pid!) };
  } finally {
    await stop(child);
  }
}

function timeRun(argv: string[]): Promise<number> {
  const t0 = performance.now();
  const child = spawn(process.execPath, argv, { stdio: 'ignore', env: { ...process.env, HEARTH_PROFILE: '', HEARTH_NODE: '' } });
  return new Promise((resolve, reject) =>
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - t0) : reject(new Error(`${argv.join(' ')} exited with ${code}`)))),
  );
}

export async function benchStartup(): Promise<void> {
  console.log(`# start-up, memory, CLI (${loadNote()})`);
  await ensureBuilt();
  const paths = await makeHome();
  const root = join(paths.dir, '..');
  const node = [HEARTH_BIN, 'run', '--home', root, '--node', 'test', '--port', '$PORT', '--swarm-port', '0'];
  const health = (port: number) => `http://127.0.0.1:${port}/admin-api/health`;
  const bare = ['-e', "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.argv[1]), '127.0.0.1')", '$PORT'];
  const env = { ...ADMIN_ENV, HEARTH_LOG: '' };
  try {
    await startOnce(node, health, env, false); // provisions the admin: later starts find it
    const hearth: number[] = [];
    const baseline: number[] = [];
    const rss: number[] = [];
    const bareRss: number[] = [];
    for (let i = 0; i < STARTS; i++) {
      const b = await startOnce(bare, (p) => `http://127.0.0.1:${p}/`, {}, i === 0);
      baseline.push(b.ms);
      if (b.rss !== undefined) bareRss.push(b.rss);
      const h = await startOnce(node, health, env, i < 2);
      hearth.push(h.ms);
      if (h.rss !== undefined) rss.push(h.rss);
    }
    const cold = median(hearth);
    const coldBase = median(baseline);
    console.log(`cold start to first 200: hearth ${hearth.map((x) => x.toFixed(0)).join(', ')} ms; node -e ${baseline.map((x) => x.toFixed(0)).join(', ')} ms`);
    rows.push({ measure: 'cold start (spawn to first 200 on /admin-api/health)', hearth: `${cold.toFixed(0)} ms`, baseline: `node -e server ${coldBase.toFixed(0)} ms`, ratio: cold / coldBase, goal: '< 1000 ms', met: cold < 1000 });
    const idle = Math.max(...rss);
    console.log(`idle RSS ${IDLE_SETTLE_MS / 1000} s after start: hearth ${rss.map((x) => x.toFixed(0)).join(', ')} MB; node -e server ${bareRss[0]!.toFixed(0)} MB`);
    rows.push({ measure: 'idle RSS after start', hearth: `${idle.toFixed(0)} MB`, baseline: `node -e server ${bareRss[0]!.toFixed(0)} MB`, ratio: idle / bareRss[0]!, goal: '< 100 MB', met: idle < 100 });

    // the CLI against a running node
    const port = await freePort();
    const running = spawn(process.execPath, node.map((a) => a.replace('$PORT', String(port))), { env: { ...process.env, ...env }, stdio: 'ignore' });
    try {
      await firstOk(health(port), performance.now(), running);
      const cli: number[] = [];
      const plain: number[] = [];
      for (let i = 0; i < CLI_RUNS; i++) {
        plain.push(await timeRun(['-e', '0']));
        cli.push(await timeRun([HEARTH_BIN, 'health', '--node', `http://127.0.0.1:${port}`, '--home', root, '--output', 'json']));
      }
      const c = median(cli);
      const p = median(plain);
      console.log(`hearth health: ${cli.map((x) => x.toFixed(0)).join(', ')} ms; node -e 0: ${plain.map((x) => x.toFixed(0)).join(', ')} ms`);
      rows.push({ measure: 'CLI command (hearth health, spawn to exit)', hearth: `${c.toFixed(0)} ms`, baseline: `node -e 0 ${p.toFixed(0)} ms`, ratio: c / p, goal: '< 300 ms', met: c < 300 });
    } finally {
      await stop(running);
    }
  } finally {
    await rm(root, { recursive: true, force: true });
  }
}
