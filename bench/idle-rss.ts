/**
 * Where an idle node's resident megabytes are (issue #33: idle RSS < 100 MB, 20 s after the start of
 * a node holding 4 apps/contexts, as bench/startup.ts measures it). Each start: `hearth run` as a
 * program on one prepared home, one `get` on each context, BENCH_IDLE_SECS (20) of idle, then
 *
 * - VmRSS and its parts (`/proc/<pid>/status`: anonymous, file-backed, shared memory);
 * - the resident set by mapping (`/proc/<pid>/smaps`): the node binary, shared libraries, the
 *   malloc heap, anonymous mappings (V8's heaps, thread stacks, malloc's other arenas);
 * - the threads alive (`/proc/<pid>/task/<tid>/comm`): an idle node should hold no runtime worker;
 * - with BENCH_PROBE=1 (bench/mem-probe.mjs through NODE_OPTIONS): every JavaScript thread's
 *   `process.memoryUsage()` and the main thread's V8 heap spaces.
 *
 * Several starts in a row, or A/B interleaved: BENCH_BINS is a comma-separated list of `hearth`
 * programs (e.g. a copy of an older build's bin/ + dist/ beside the current one); each round starts
 * each of them once. BENCH_HOME reuses a prepared home (else one is made and kept, its path printed).
 * `npx tsx bench/idle-rss.ts`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HEARTH_BIN } from '../test/helpers/node.ts';
import { ADMIN_ENV, installAppsWithContexts, loadNote, median, startNode } from './harness.ts';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const IDLE_SECS = Number(process.env.BENCH_IDLE_SECS ?? 20);
const PROBE = process.env.BENCH_PROBE === '1';
const BINS = (process.env.BENCH_BINS ?? HEARTH_BIN).split(',');
const MB = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Prepares (or reuses) a home with 4 apps, one context each; its contexts and an admin token. */
async function home(): Promise<{ root: string; contexts: string[]; token: string }> {
  const given = process.env.BENCH_HOME;
  if (given) return JSON.parse(await readFile(join(given, 'bench-idle.json'), 'utf8')) as { root: string; contexts: string[]; token: string };
  const first = await startNode();
  const contexts = (await installAppsWithContexts(first.client, 4, 'com.hearth.bench.idle')).map((c) => c.id);
  first.spawned.child.kill('SIGTERM');
  await first.spawned.exited;
  const prepared = { root: first.home, contexts, token: first.token };
  await writeFile(join(first.home, 'bench-idle.json'), JSON.stringify(prepared));
  console.log(`home: ${first.home} (BENCH_HOME=${first.home} reuses it)`);
  return prepared;
}

async function healthy(url: string, child: ChildProcess): Promise<void> {
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the node exited with ${child.exitCode}`);
    if (await fetch(`${url}/admin-api/health`).then((r) => r.status === 200, () => false)) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

/** Resident kB by kind of mapping, from smaps. */
async function smapsBreakdown(pid: number): Promise<Record<string, number>> {
  const text = await readFile(`/proc/${pid}/smaps`, 'utf8');
  const out: Record<string, number> = {};
  let kind = '';
  for (const line of text.split('\n')) {
    const head = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (head) {
      const name = head[1]!;
      kind = name === '' ? 'anon' : name.startsWith('[') ? name : /\/node$/.test(name) ? 'node binary' : name.endsWith('.node') ? 'addons (.node)' : /\.so/.test(name) ? 'shared libs' : 'other files';
      continue;
    }
    const rss = /^Rss:\s+(\d+) kB/.exec(line);
    if (rss) out[kind] = (out[kind] ?? 0) + Number(rss[1]);
  }
  return out;
}

async function threads(pid: number): Promise<string[]> {
  const names: string[] = [];
  for (const tid of await readdir(`/proc/${pid}/task`)) names.push((await readFile(`/proc/${pid}/task/${tid}/comm`, 'utf8').catch(() => '?')).trim());
  const counts = new Map<string, number>();
  for (const n of names) counts.set(n, (counts.get(n) ?? 0) + 1);
  return [...counts].map(([n, c]) => (c > 1 ? `${n}×${c}` : n));
}

interface Probe { threadId: number; rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number; spaces?: Record<string, { size: number; used: number }> }

async function probes(dir: string): Promise<Probe[]> {
  const out: Probe[] = [];
  for (const f of await readdir(dir)) out.push(JSON.parse(await readFile(join(dir, f), 'utf8')) as Probe);
  return out.sort((a, b) => a.threadId - b.threadId);
}

async function once(bin: string, prepared: { root: string; contexts: string[]; token: string }): Promise<number> {
  const port = 20000 + Math.floor(Math.random() * 20000);
  const url = `http://127.0.0.1:${port}`;
  const probeDir = await mkdtemp(join(tmpdir(), 'hearth-idle-'));
  const env: NodeJS.ProcessEnv = { ...process.env, ...ADMIN_ENV, HEARTH_LOG: '' };
  if (PROBE) Object.assign(env, { NODE_OPTIONS: `--import=${join(import.meta.dirname, 'mem-probe.mjs')}`, HEARTH_MEM_PROBE: join(probeDir, 'thread') });
  const t0 = performance.now();
  const child = spawn(bin, ['run', '--home', prepared.root, '--node', 'test', '--port', String(port), '--swarm-port', '0'], { env, stdio: 'ignore' });
  try {
    await healthy(url, child);
    const start = performance.now() - t0;
    for (const id of prepared.contexts) {
      const res = await fetch(`${url}/jsonrpc`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${prepared.token}` }, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'execute', params: { contextId: id, method: 'get', argsJson: { key: 'k' } } }) });
      if (res.status !== 200) throw new Error(`get answered ${res.status}`);
      await res.text();
    }
    await new Promise((r) => setTimeout(r, IDLE_SECS * 1000));
    const status = await readFile(`/proc/${child.pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    const maps = await smapsBreakdown(child.pid!);
    console.log(`${bin}: start ${start.toFixed(0)} ms; RSS ${MB(rss)} MB (anon ${MB(kb('RssAnon'))}, file ${MB(kb('RssFile'))}, shmem ${MB(kb('RssShmem'))})`);
    console.log(`  by mapping: ${Object.entries(maps).sort((a, b) => b[1] - a[1]).map(([k, v]) => `${k} ${MB(v * 1024)}`).join(', ')}`);
    console.log(`  threads: ${(await threads(child.pid!)).join(', ')}`);
    if (PROBE) for (const p of await probes(probeDir)) {
      console.log(`  thread ${p.threadId}: heap used ${MB(p.heapUsed)} of ${MB(p.heapTotal)}, external ${MB(p.external)} (array buffers ${MB(p.arrayBuffers)})`);
      if (p.spaces) console.log(`    spaces: ${Object.entries(p.spaces).map(([k, s]) => `${k.replace('_space', '')} ${MB(s.used)}/${MB(s.size)}`).join(', ')}`);
    }
    return rss;
  } finally {
    const exited = new Promise((r) => child.once('exit', r));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
    await rm(probeDir, { recursive: true, force: true });
  }
}

const prepared = await home();
console.log(`# idle RSS ${IDLE_SECS} s after start, ${ROUNDS} rounds (${loadNote()})`);
const byBin = new Map<string, number[]>(BINS.map((b) => [b, []]));
for (let i = 0; i < ROUNDS; i++) for (const bin of BINS) byBin.get(bin)!.push(await once(bin, prepared));
console.log(`(${loadNote()} after)`);
for (const [bin, xs] of byBin) console.log(`${bin}: RSS ${xs.map(MB).join(', ')} MB; median ${MB(median(xs))}`);
