/**
 * Benchmark (issue #22): a node WITH applications and contexts, stopped and started again — what a
 * user waits for after a restart, and what the node holds in memory idle and after load.
 *
 * - Set-up: BENCH_RESTART_APPS applications (default 4, alternately `kv` and `kv_store`, each its
 *   own package), one context each with one key written; the node is stopped (SIGTERM) and started
 *   again on the same home.
 * - Time to listening: spawn to the node's "listening" line, against spawning `node -e` with a
 *   node:http server to its first answer, in the same run. Goal (issue): cold start < 500 ms.
 * - First execute after the restart: one `get` on each context, one after the other, each timed
 *   (client send to answer); then the same again (warm). Goal: first < 20 ms.
 * - Idle RSS: 3 s after the start, and again after BENCH_IDLE_SECS more (default 20: past the idle
 *   compactor's two collections, src/runtime/idle-compactor.ts, and past the
 *   workers' idle retirement), with the breakdown of every thread (bench/mem-probe.mjs:
 *   heapUsed, external, arrayBuffers of the main thread; heap of each runtime worker). Goal < 100 MB.
 * - The restarted node gets MALLOC_ARENA_MAX=2 and MALLOC_TRIM_THRESHOLD_=131072 as the `hearth`
 *   program gives them (bin/hearth.js), unless the environment sets them (e.g. MALLOC_ARENA_MAX=8
 *   to compare).
 * - After load: BENCH_MEM_LOAD_SECS (default 60) of `set` and `get` at CONNECTIONS on the
 *   `kv_store` context, RSS right after and BENCH_IDLE_SECS later. Goal < 150 MB.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, MemoryTokenStore, type Client } from '../src/client/index.ts';
import { ROOT, spawnNode, type SpawnedNode } from '../test/helpers/node.ts';
import { ADMIN_ENV, CONNECTIONS, installAppsWithContexts, loadNote, loadgen, median, rows, rssMB, startNode } from './harness.ts';
import { freePort } from './spawned.ts';

const APPS = Number(process.env.BENCH_RESTART_APPS ?? 4);
const IDLE_SECS = Number(process.env.BENCH_IDLE_SECS ?? 20);
const LOAD_SECS = Number(process.env.BENCH_MEM_LOAD_SECS ?? 60);
const SETTLE_MS = 3_000;
const MB = 1e6;

interface ThreadMemory {
  threadId: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  spaces?: Record<string, { size: number; used: number }>;
}

/** The probe's last reading of every thread alive (main thread first): files written in the last second. */
async function threads(dir: string): Promise<ThreadMemory[]> {
  const out: ThreadMemory[] = [];
  for (const f of await readdir(dir)) {
    try {
      if (Date.now() - (await stat(join(dir, f))).mtimeMs > 1_000) continue; // a terminated worker's
      out.push(JSON.parse(await readFile(join(dir, f), 'utf8')) as ThreadMemory);
    } catch {
      /* written or removed as we read */
    }
  }
  return out.sort((a, b) => a.threadId - b.threadId);
}

const fmt = (n: number) => (n / MB).toFixed(1);

/**
 * The process's resident memory by kind of mapping (/proc/<pid>/smaps): WebAssembly memories (V8
 * reserves each guest memory with its guard region: mappings of 1 GiB and more), malloc's heaps
 * (`[heap]` and the 64 MiB-aligned arenas of threads: mappings of 64 MiB or 128 MiB reserved),
 * files (the node binary, shared libraries, the bundle), and the rest anonymous (V8's heaps,
 * thread stacks, LevelDB's and ICU's allocations through mmap).
 */
async function mappings(pid: number): Promise<string> {
  const text = await readFile(`/proc/${pid}/smaps`, 'utf8').catch(() => '');
  const maps: Array<{ start: number; end: number; perms: string; path: string; rss: number }> = [];
  for (const line of text.split('\n')) {
    const head = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \d+\s*(.*)$/.exec(line);
    if (head) maps.push({ start: parseInt(head[1]!, 16), end: parseInt(head[2]!, 16), perms: head[3]!, path: head[4] ?? '', rss: 0 });
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss && maps.length) maps[maps.length - 1]!.rss += Number(rss[1]) * 1024;
  }
  const kinds = { wasm: 0, malloc: 0, files: 0, anon: 0 };
  const ARENA = [64 * 2 ** 20, 128 * 2 ** 20];
  maps.forEach((m, i) => {
    const next = maps[i + 1];
    // a reservation's used part (rw) is followed by its reserved rest (---): a WebAssembly memory
    // (1 GiB and more with its guard region) or a thread's malloc arena (64 MiB)
    const group = !m.path && next && !next.path && next.perms.startsWith('---') && next.start === m.end ? next.end - m.start : m.end - m.start;
    const kind = group >= 2 ** 30 ? 'wasm' : m.path === '[heap]' || ARENA.includes(group) ? 'malloc' : m.path.startsWith('/') ? 'files' : 'anon';
    kinds[kind] += m.rss;
  });
  return `wasm memories ${fmt(kinds.wasm)}, malloc heaps ${fmt(kinds.malloc)}, files ${fmt(kinds.files)}, other anonymous ${fmt(kinds.anon)}`;
}

async function breakdown(pid: number, dir: string): Promise<{ rss: number; line: string }> {
  const rss = await rssMB(pid);
  const maps = await mappings(pid);
  const ts = await threads(dir);
  const main = ts.find((t) => t.threadId === 0);
  const workers = ts.filter((t) => t.threadId !== 0);
  const spaces = main?.spaces ? Object.entries(main.spaces).filter(([, v]) => v.size >= MB).map(([k, v]) => `${k.replace('_space', '')} ${fmt(v.used)}/${fmt(v.size)}`).join(', ') : '';
  const line =
    `RSS ${rss.toFixed(1)} MB (${maps}); main heapUsed ${main ? fmt(main.heapUsed) : '?'} / heapTotal ${main ? fmt(main.heapTotal) : '?'}, ` +
    `external ${main ? fmt(main.external) : '?'} (arrayBuffers ${main ? fmt(main.arrayBuffers) : '?'}) [spaces used/size: ${spaces}]; ` +
    `${workers.length} worker(s)${workers.length ? `: heapUsed/heapTotal ${workers.map((w) => `${fmt(w.heapUsed)}/${fmt(w.heapTotal)}`).join(', ')}` : ''}`;
  return { rss, line };
}

/** Spawn of a bare node:http server to its first answer (the baseline of the time to listening). */
async function bareStart(): Promise<number> {
  const port = await freePort();
  const t0 = performance.now();
  const child = spawn(process.execPath, ['-e', "require('node:http').createServer((q, s) => s.end('ok')).listen(Number(process.argv[1]), '127.0.0.1')", String(port)], { stdio: 'ignore' });
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error('the bare server exited');
      if (await fetch(`http://127.0.0.1:${port}/`).then((r) => r.ok, () => false)) return performance.now() - t0;
      await new Promise((r) => setTimeout(r, 2));
    }
  } finally {
    child.kill('SIGTERM');
  }
}

async function login(url: string): Promise<{ client: Client; token: string }> {
  const client = createClient({ baseUrl: url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username: ADMIN_ENV.MERO_AUTH_ADMIN_USER, password: ADMIN_ENV.MERO_AUTH_ADMIN_PASSWORD });
  return { client, token: accessToken };
}

async function timed<T>(f: () => Promise<T>): Promise<number> {
  const t0 = performance.now();
  await f();
  return performance.now() - t0;
}

export async function benchRestart(): Promise<void> {
  console.log(`# restart with ${APPS} applications and contexts, memory idle and after load (${loadNote()})`);
  const probeDir = await mkdtemp(join(tmpdir(), 'hearth-mem-'));
  // BENCH_RESTART_NODE_OPTIONS: more options for the restarted node (e.g. a V8 heap flag to compare)
  const probeEnv = { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} ${process.env.BENCH_RESTART_NODE_OPTIONS ?? ''} --import=${join(ROOT, 'bench/mem-probe.mjs')}`.trim(), HEARTH_MEM_PROBE: join(probeDir, 'thread'),
    // as `hearth` run as a program sets it (bin/hearth.js); spawnNode runs `node bin/hearth.js`, which does not
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    MALLOC_TRIM_THRESHOLD_: process.env.MALLOC_TRIM_THRESHOLD_ ?? '131072' };
  const first = await startNode();
  const contexts: Array<{ app: string; id: string }> = [];
  let node: SpawnedNode | undefined;
  try {
    contexts.push(...(await installAppsWithContexts(first.client, APPS, 'com.hearth.bench.restart')));
    first.spawned.child.kill('SIGTERM');
    await first.spawned.exited;

    const bare: number[] = [];
    for (let i = 0; i < 3; i++) bare.push(await bareStart());
    const t0 = performance.now();
    node = await spawnNode(['run', '--home', first.home, '--node', 'test'], { ...ADMIN_ENV, HEARTH_LOG: '', ...probeEnv }, 60_000);
    const listening = performance.now() - t0;
    const { client, token } = await login(node.url);
    const firstCalls: string[] = [];
    const firstMs: number[] = [];
    for (const { app, id } of contexts) {
      const ms = await timed(() => client.rpc.execute(id, 'get', { key: 'k' }));
      firstMs.push(ms);
      firstCalls.push(`${app} ${ms.toFixed(1)}`);
    }
    const warmMs: number[] = [];
    for (const { id } of contexts) warmMs.push(await timed(() => client.rpc.execute(id, 'get', { key: 'k' })));
    const worstFirst = Math.max(...firstMs);
    console.log(`time to listening: hearth ${listening.toFixed(0)} ms; node -e server ${bare.map((b) => b.toFixed(0)).join(', ')} ms`);
    console.log(`first execute after the restart: ${firstCalls.join(', ')} ms; warm: ${warmMs.map((m) => m.toFixed(1)).join(', ')} ms`);
    rows.push({ measure: `restart with ${APPS} apps/contexts: spawn to listening`, hearth: `${listening.toFixed(0)} ms`, baseline: `node -e server ${median(bare).toFixed(0)} ms`, ratio: listening / median(bare), goal: '< 500 ms', met: listening < 500 });
    rows.push({ measure: 'first execute after a restart (worst context)', hearth: `${worstFirst.toFixed(1)} ms`, baseline: `warm call ${median(warmMs).toFixed(1)} ms`, ratio: worstFirst / median(warmMs), goal: '< 20 ms', met: worstFirst < 20 });

    const pid = node.child.pid!;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const idle = await breakdown(pid, probeDir);
    console.log(`idle ${SETTLE_MS / 1000} s after the calls: ${idle.line}`);
    await new Promise((r) => setTimeout(r, IDLE_SECS * 1000));
    const later = await breakdown(pid, probeDir);
    console.log(`idle ${SETTLE_MS / 1000 + IDLE_SECS} s after the calls: ${later.line}`);
    // the worker let its kept instances go after INSTANCE_RELEASE_MS (worker-retire.ts): what the next call pays
    const afterRelease: number[] = [];
    for (const { id } of contexts) afterRelease.push(await timed(() => client.rpc.execute(id, 'get', { key: 'k' })));
    console.log(`first execute after the idle time (kept instances released when past 15 s): ${afterRelease.map((m) => m.toFixed(1)).join(', ')} ms`);
    rows.push({ measure: 'first execute after the idle time (worst context)', hearth: `${Math.max(...afterRelease).toFixed(1)} ms`, baseline: `warm call ${median(warmMs).toFixed(1)} ms`, ratio: Math.max(...afterRelease) / median(warmMs), goal: '(reported)' });
    rows.push({ measure: `idle RSS (${APPS} apps/contexts, after first calls)`, hearth: `${idle.rss.toFixed(0)} → ${later.rss.toFixed(0)} MB`, baseline: '', goal: '< 100 MB', met: later.rss < 100 });

    const store = contexts.find((c) => c.app === 'kv_store') ?? contexts[0]!;
    if (LOAD_SECS > 0) {
      const headers = { authorization: `Bearer ${token}` };
      const url = `${node.url}/jsonrpc`;
      const half = Math.max(1, Math.round(LOAD_SECS / 2));
      const rpc = (method: 'get' | 'set') => ({ contextId: store.id, method, keyPrefix: 'm', keys: 200, ...(method === 'set' ? { value: 'x'.repeat(64) } : {}) });
      const [sets, gets] = [await loadgen({ url, headers, rpc: rpc('set'), connections: CONNECTIONS, durationSecs: half, check: 'jsonrpc' }), await loadgen({ url, headers, rpc: rpc('get'), connections: CONNECTIONS, durationSecs: half, check: 'jsonrpc' })];
      const loaded = await breakdown(pid, probeDir);
      console.log(`after ${2 * half} s of load (set ${sets.rps.toFixed(0)} req/s, get ${gets.rps.toFixed(0)} req/s, errors ${sets.errors + gets.errors}): ${loaded.line}`);
      await new Promise((r) => setTimeout(r, IDLE_SECS * 1000));
      const rested = await breakdown(pid, probeDir);
      console.log(`${IDLE_SECS} s after the load: ${rested.line}`);
      rows.push({ measure: `RSS after ${2 * half} s of load (kv_store set+get)`, hearth: `${loaded.rss.toFixed(0)} MB (${rested.rss.toFixed(0)} MB ${IDLE_SECS} s later)`, baseline: `idle ${later.rss.toFixed(0)} MB`, ratio: loaded.rss / later.rss, goal: '< 150 MB', met: loaded.rss < 150 });
    }
  } finally {
    if (node) {
      node.child.kill('SIGTERM');
      await node.exited;
    }
    await rm(first.home, { recursive: true, force: true });
    await rm(probeDir, { recursive: true, force: true });
  }
}
