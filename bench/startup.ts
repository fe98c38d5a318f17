/**
 * Benchmark (issues #14, #33): what a user waits for and what an idle node holds, against plain
 * `node -e` measured the same way in the same run.
 *
 * - Cold start (issue #33): a node holding BENCH_START_APPS applications (default 4, alternately the
 *   `kv` and `kv_store` test apps) with one context each, stopped and started again as users run
 *   it — `bin/hearth.js` executed as a program (the installed `hearth` on PATH is a symlink to it:
 *   /bin/sh reads its first line and execs node with the malloc settings), `run` on that home —
 *   from spawn to the first 200 on `GET /admin-api/health`, polled every 2 ms. Against `node -e`
 *   with a node:http server spawned and polled the same way, the two interleaved, BENCH_STARTS
 *   times each (default 5); medians. Goals: < 400 ms and ≤ 4 × the `node -e` server.
 * - First call after the start: right after that first 200, one `POST /jsonrpc` `execute` `get`
 *   on each context, one after the other, with the admin token the client held before the
 *   restart (send to answer). Goal: < 20 ms (the worst context, median over the starts).
 * - Idle RSS: the node's resident set (main thread and workers) 20 s after one start (after its
 *   first calls), against the `node -e` server's. Goal: < 100 MB.
 * - CLI latency: `hearth health` against a running node, spawn to exit, against `node -e 0`.
 *   Median of BENCH_CLI_RUNS (default 10). Goal: < 300 ms.
 *
 * - CPU by the first 200: the process's CPU time (all threads, and its main thread) when it first
 *   answered, for both: on a loaded machine it moves far less than the wall time.
 *
 * BENCH_NODE_FLAGS (e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof`) go to the started node's Node.js.
 * `npx tsx bench/startup.ts`, or `BENCH_ONLY=startup npm run bench`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { HEARTH_BIN } from '../test/helpers/node.ts';
import { ADMIN_ENV, cpuSecs, ensureBuilt, installAppsWithContexts, loadNote, median, rows, rssMB, startNode, threadCpuSecs } from './harness.ts';
import { freePort, firstOk, timedGet } from './spawned.ts';

const STARTS = Number(process.env.BENCH_STARTS ?? 5);
const CLI_RUNS = Number(process.env.BENCH_CLI_RUNS ?? 10);
const APPS = Number(process.env.BENCH_START_APPS ?? 4);
const IDLE_SECS = Number(process.env.BENCH_IDLE_SECS ?? 20);

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = new Promise((r) => child.once('exit', r));
  child.kill('SIGTERM');
  await exited;
}

interface Start {
  ms: number;
  /** CPU ms the process had used at its first 200 (all threads, and its main thread) */
  cpu: number;
  mainCpu: number;
  /** the first call on each context, in order */
  calls: number[];
  rss?: number;
}

/** Spawn `command argv` to the first 200 on `health(port)`; then what `after` measures. */
async function startOnce(command: string, argv: string[], health: (port: number) => string, env: NodeJS.ProcessEnv, after?: (url: string, pid: number) => Promise<Pick<Start, 'calls' | 'rss'>>): Promise<Start> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(command, argv.map((a) => a.replace('$PORT', String(port))), { env: { ...process.env, ...env }, stdio: 'ignore' });
  try {
    const ms = await firstOk(health(port), t0, child);
    const [cpu, mainCpu] = [(await cpuSecs(child.pid!)) * 1000, (await threadCpuSecs(child.pid!)) * 1000];
    return { ms, cpu, mainCpu, calls: [], ...(after ? await after(`http://127.0.0.1:${port}`, child.pid!) : {}) };
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

/** `bin/hearth.js` as a program, or under `node <BENCH_NODE_FLAGS>` (which skips its malloc line: set here instead). */
function hearthCommand(args: string[]): { command: string; argv: string[]; env: NodeJS.ProcessEnv } {
  const flags = process.env.BENCH_NODE_FLAGS?.trim();
  if (!flags) return { command: HEARTH_BIN, argv: args, env: {} };
  return { command: process.execPath, argv: [...flags.split(/\s+/), HEARTH_BIN, ...args], env: { MALLOC_ARENA_MAX: '2', MALLOC_TRIM_THRESHOLD_: '131072' } };
}

export async function benchStartup(): Promise<void> {
  console.log(`# cold start with ${APPS} applications and contexts, first call, idle memory, CLI (${loadNote()})`);
  await ensureBuilt();
  const first = await startNode();
  const root = first.home;
  try {
    const contexts = await installAppsWithContexts(first.client, APPS, 'com.hearth.bench.start');
    const token = first.token;
    first.spawned.child.kill('SIGTERM');
    await first.spawned.exited;

    const hearth = hearthCommand(['run', '--home', root, '--node', 'test', '--port', '$PORT', '--swarm-port', '0']);
    const env = { ...ADMIN_ENV, HEARTH_LOG: '', ...hearth.env };
    const health = (port: number) => `http://127.0.0.1:${port}/admin-api/health`;
    const bare = ['-e', "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.argv[1]), '127.0.0.1')", '$PORT'];
    const firstCalls = async (url: string): Promise<number[]> => {
      const calls: number[] = [];
      for (const c of contexts) calls.push(await timedGet(url, token, c.id));
      return calls;
    };
    const idle = async (pid: number): Promise<number> => {
      await new Promise((r) => setTimeout(r, IDLE_SECS * 1000));
      return rssMB(pid);
    };
    const starts: Start[] = [];
    const baseline: Start[] = [];
    let bareRss = NaN;
    for (let i = 0; i < STARTS; i++) {
      const b = await startOnce(process.execPath, bare, (p) => `http://127.0.0.1:${p}/`, {}, i === 0 ? async (_url, pid) => ({ calls: [], rss: await idle(pid) }) : undefined);
      baseline.push(b);
      if (b.rss !== undefined) bareRss = b.rss;
      // the last start also stays up IDLE_SECS for its idle resident set
      starts.push(await startOnce(hearth.command, hearth.argv, health, env, async (url, pid) => ({ calls: await firstCalls(url), ...(i === STARTS - 1 ? { rss: await idle(pid) } : {}) })));
    }
    console.log(`(${loadNote()} after the starts)`);
    const ms = (xs: number[]) => xs.map((x) => x.toFixed(0)).join(', ');
    const report = (name: string, ss: Start[]) =>
      console.log(`${name}: to first 200 ${ms(ss.map((s) => s.ms))} ms; CPU by then ${ms(ss.map((s) => s.cpu))} ms (main thread ${ms(ss.map((s) => s.mainCpu))} ms)`);
    report('hearth', starts);
    report('node -e server', baseline);
    const cold = median(starts.map((s) => s.ms));
    const coldBase = median(baseline.map((s) => s.ms));
    const cpu = median(starts.map((s) => s.cpu));
    const cpuBase = median(baseline.map((s) => s.cpu));
    const worstCall = median(starts.map((s) => Math.max(...s.calls)));
    const rss = starts.find((s) => s.rss !== undefined)!.rss!;
    console.log(`first call on each context after the first 200: ${starts.map((s) => s.calls.map((c) => c.toFixed(1)).join('/')).join(', ')} ms`);
    console.log(`idle RSS ${IDLE_SECS} s after start: hearth ${rss.toFixed(0)} MB; node -e server ${bareRss.toFixed(0)} MB`);
    const ratio = cold / coldBase;
    rows.push({ measure: `cold start, ${APPS} apps/contexts (spawn to first 200 on health)`, hearth: `${cold.toFixed(0)} ms`, baseline: `node -e server ${coldBase.toFixed(0)} ms`, ratio, goal: '< 400 ms, ratio <= 4', met: cold < 400 && ratio <= 4 });
    rows.push({ measure: 'cold start: CPU used by the first 200 (all threads)', hearth: `${cpu.toFixed(0)} ms`, baseline: `node -e server ${cpuBase.toFixed(0)} ms`, ratio: cpu / cpuBase, goal: '(reported)' });
    rows.push({ measure: 'first JSON-RPC call after start (worst context)', hearth: `${worstCall.toFixed(1)} ms`, baseline: '-', goal: '< 20 ms', met: worstCall < 20 });
    rows.push({ measure: `idle RSS ${IDLE_SECS} s after start`, hearth: `${rss.toFixed(0)} MB`, baseline: `node -e server ${bareRss.toFixed(0)} MB`, ratio: rss / bareRss, goal: '< 100 MB', met: rss < 100 });

    // the CLI against a running node
    const port = await freePort();
    const running = spawn(hearth.command, hearth.argv.map((a) => a.replace('$PORT', String(port))), { env: { ...process.env, ...env }, stdio: 'ignore' });
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

if (import.meta.url === `file://${process.argv[1]}`) {
  const { printTable } = await import('./harness.ts');
  await benchStartup();
  printTable();
}
