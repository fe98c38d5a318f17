/**
 * A/B of builds' cold start (issue #33): the compiled node of two (or more) checkouts started on
 * the same home (4 applications with a context each, as bench/startup.ts makes it), interleaved
 * with a `node -e` server, in alternating rounds: spawn → first 200 on `GET /admin-api/health`,
 * the CPU the process had used by then (all threads, main thread), spawn → first 200 on
 * `GET /admin-api/ready`, and the first `get` on each context right after the health 200. On a
 * shared machine the rounds of every build meet the same load, so their same-round figures compare
 * where one run's would not.
 *
 * AB_ROOTS (comma-separated checkouts holding a built `bin/hearth.js` + `dist/`; default: a copy of
 * main's build in /tmp/hstart-base and this checkout), AB_ROUNDS (6), AB_APPS (4),
 * AB_NICE (a `nice` value for every measured process, e.g. -15; default none).
 * `npx tsx bench/startup-ab.ts`
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../test/helpers/node.ts';
import { ADMIN_ENV, cpuSecs, installAppsWithContexts, median, startNode, threadCpuSecs } from './harness.ts';
import { freePort, firstOk, timedGet } from './spawned.ts';

const roots = (process.env.AB_ROOTS ?? `/tmp/hstart-base,${ROOT}`).split(',');
const ROUNDS = Number(process.env.AB_ROUNDS ?? 6);
const APPS = Number(process.env.AB_APPS ?? 4);
const NICE = process.env.AB_NICE;

interface Start {
  ms: number;
  cpu: number;
  main: number;
  ready: number;
  calls: number[];
}

async function startOnce(argv: string[], healthPath: string, after?: (url: string, t0: number, child: ChildProcess) => Promise<Partial<Start>>): Promise<Start> {
  const port = await freePort();
  const args = argv.map((a) => a.replace('$PORT', String(port)));
  const [command, ...rest] = NICE ? ['nice', '-n', NICE, ...args] : args;
  const t0 = performance.now();
  const child = spawn(command!, rest, { env: { ...process.env, ...ADMIN_ENV, HEARTH_LOG: '' }, stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  try {
    const url = `http://127.0.0.1:${port}`;
    const ms = await firstOk(`${url}${healthPath}`, t0, child).catch((err: Error) => {
      throw new Error(`${err.message}: ${stderr}`);
    });
    const cpu = (await cpuSecs(child.pid!)) * 1000;
    const main = (await threadCpuSecs(child.pid!)) * 1000;
    return { ms, cpu, main, ready: NaN, calls: [], ...(after ? await after(url, t0, child) : {}) };
  } finally {
    if (child.exitCode === null) {
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
  }
}

const first = await startNode();
const home = first.home;
try {
  const contexts = await installAppsWithContexts(first.client, APPS, 'com.hearth.bench.startab');
  const token = first.token;
  first.spawned.child.kill('SIGTERM');
  await first.spawned.exited;
  const bare = [process.execPath, '-e', "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.argv[1]), '127.0.0.1')", '$PORT'];
  const results = new Map<string, Start[]>([['node -e', []], ...roots.map((r) => [r, []] as [string, Start[]])]);
  const after = async (url: string, t0: number, child: ChildProcess): Promise<Partial<Start>> => {
    const calls: number[] = [];
    for (const c of contexts) calls.push(await timedGet(url, token, c.id));
    return { calls, ready: await firstOk(`${url}/admin-api/ready`, t0, child) };
  };
  const fmt = (s: Start) => `${s.ms.toFixed(0)} ms (cpu ${s.cpu.toFixed(0)}, main ${s.main.toFixed(0)}; ready ${s.ready.toFixed(0)}; calls ${s.calls.map((c) => c.toFixed(1)).join('/')})`;
  for (let k = 0; k < ROUNDS; k++) {
    // the order rotates each round so no build always follows the same one
    const order = [...roots.keys()].map((i) => roots[(i + k) % roots.length]!);
    const b = await startOnce(bare, '/');
    results.get('node -e')!.push(b);
    const line = [`round ${k} (load ${loadavg()[0].toFixed(2)}): node -e ${b.ms.toFixed(0)} ms (cpu ${b.cpu.toFixed(0)})`];
    for (const r of order) {
      const s = await startOnce([join(r, 'bin/hearth.js'), 'run', '--home', home, '--node', 'test', '--port', '$PORT', '--swarm-port', '0'], '/admin-api/health', after);
      results.get(r)!.push(s);
      line.push(`${r}: ${fmt(s)} = ${(s.ms / b.ms).toFixed(2)}x`);
    }
    console.log(line.join('\n  '));
  }
  const bareMed = median(results.get('node -e')!.map((s) => s.ms));
  for (const [name, ss] of results) {
    const worst = median(ss.map((s) => (s.calls.length ? Math.max(...s.calls) : NaN)));
    const ratios = ss.map((s, i) => s.ms / results.get('node -e')![i]!.ms);
    console.log(
      `MEDIAN ${name}: ${median(ss.map((s) => s.ms)).toFixed(0)} ms (${(median(ss.map((s) => s.ms)) / bareMed).toFixed(2)}x; same-round ratios median ${median(ratios).toFixed(2)}), cpu ${median(ss.map((s) => s.cpu)).toFixed(0)}, main ${median(ss.map((s) => s.main)).toFixed(0)}, ready ${median(ss.map((s) => s.ready)).toFixed(0)} ms, worst first call ${worst.toFixed(1)} ms`,
    );
  }
} finally {
  await rm(home, { recursive: true, force: true });
}
