/**
 * What the benchmarks share (issue #14 "honest benches"): the compiled node as users run it
 * (`bin/hearth.js`, built first when stale), the bare baseline server, the external load generator
 * (bench/loadgen.mjs: autocannon in its own process), and the summary rows `npm run bench` prints
 * as one table. Every figure is measured in the same run as its baseline, on the same machine.
 */
import { spawn } from 'node:child_process';
import { readFile, rm } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { join } from 'node:path';
import { build } from '../scripts/build.ts';
import { createClient, MemoryTokenStore, type Client } from '../src/client/index.ts';
import { makeBundle } from '../test/helpers/bundles.ts';
import { makeHome, ROOT, spawnNode, type SpawnedNode } from '../test/helpers/node.ts';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';

export const ADMIN_ENV = { MERO_AUTH_ADMIN_USER: 'dev', MERO_AUTH_ADMIN_PASSWORD: 'dev-password' };
/** Bench nodes log as a node does by default (test nodes are quietened to warn). */
const DEFAULT_LOGGING = { HEARTH_LOG: '' };

/** Seconds each measured load runs (BENCH_SECS, default 5); each is preceded by a 1 s warm-up. */
export const LOAD_SECS = Number(process.env.BENCH_SECS ?? 5);
/** Connections of a saturating load (BENCH_CONNECTIONS, default 32). */
export const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 32);

export interface LoadSpec {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  rpc?: { contextId: string; method: 'get' | 'set'; keyPrefix: string; keys: number; value?: string };
  connections?: number;
  durationSecs?: number;
  check?: 'status' | 'jsonrpc';
}

export interface LoadResult {
  requests: number;
  rps: number;
  /** autocannon's percentiles are whole milliseconds; the mean is not */
  meanMs: number;
  p50ms: number;
  /** the median answer time, not rounded (bench/loadgen.mjs) */
  p50exactMs: number;
  p99ms: number;
  /** the 99th percentile answer time, not rounded (bench/loadgen.mjs) */
  p99exactMs: number;
  errors: number;
}

/** Runs bench/loadgen.mjs with `spec` and answers what it measured. */
export function loadgen(spec: LoadSpec): Promise<LoadResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'bench/loadgen.mjs'), JSON.stringify(spec)], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.on('error', reject);
    child.on('exit', (code) => {
      if (code !== 0) return reject(new Error(`loadgen exited with ${code}`));
      resolve(JSON.parse(out.trim().split('\n').pop()!) as LoadResult);
    });
  });
}

/** A warm-up of one second, then the measured load. */
export async function measure(spec: LoadSpec): Promise<LoadResult> {
  await loadgen({ ...spec, durationSecs: 1 });
  return loadgen({ durationSecs: LOAD_SECS, connections: CONNECTIONS, ...spec });
}

export interface Process {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

/**
 * The bare node:http baseline (bench/bare-server.mjs) in its own process, or another baseline
 * server script that prints its `{ url }` line the same way (bench/fastify-server.mjs).
 */
export function startBare(script = 'bench/bare-server.mjs'): Promise<Process> {
  const child = spawn(process.execPath, [join(ROOT, script)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.stdout.once('data', (d: Buffer) =>
      resolve({
        url: (JSON.parse(d.toString()) as { url: string }).url,
        pid: child.pid!,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      }),
    );
  });
}

export interface BenchNode extends Process {
  spawned: SpawnedNode;
  client: Client;
  token: string;
  home: string;
}

let built = false;

/** Builds the distribution when stale (once per run). */
export async function ensureBuilt(): Promise<void> {
  if (built) return;
  const r = await build({ ifStale: true });
  if (r.built) console.log('(built dist/ first: the sources changed since the last build)');
  built = true;
}

/**
 * BENCH_NODE_FLAGS: Node.js flags for the node processes only (e.g. `--cpu-prof
 * --cpu-prof-dir=/tmp/prof`, which NODE_OPTIONS refuses). `exec` keeps the node's pid.
 */
function nodeFlagsWrap(): string[] {
  const flags = process.env.BENCH_NODE_FLAGS?.trim();
  return flags ? ['sh', '-c', `exec "$0" ${flags} "$@"`] : [];
}

/** A compiled node in a fresh home, logged in as the admin. */
export async function startNode(extraArgs: string[] = []): Promise<BenchNode> {
  await ensureBuilt();
  const paths = await makeHome();
  const home = join(paths.dir, '..');
  const spawned = await spawnNode(['run', '--home', home, '--node', 'test', ...extraArgs], { ...ADMIN_ENV, ...DEFAULT_LOGGING }, 60_000, nodeFlagsWrap());
  const client = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username: ADMIN_ENV.MERO_AUTH_ADMIN_USER, password: ADMIN_ENV.MERO_AUTH_ADMIN_PASSWORD });
  return {
    url: spawned.url,
    pid: spawned.child.pid!,
    spawned,
    client,
    token: accessToken,
    home,
    stop: async () => {
      spawned.child.kill('SIGTERM');
      await spawned.exited;
      await rm(home, { recursive: true, force: true });
    },
  };
}

/**
 * `count` applications (alternately the `kv` and `kv_store` test apps, each its own package), one
 * context each with the key `k` written: the node a restart or cold-start bench starts again.
 */
export async function installAppsWithContexts(client: Client, count: number, packagePrefix: string): Promise<Array<{ app: string; id: string }>> {
  const contexts: Array<{ app: string; id: string }> = [];
  for (let i = 0; i < count; i++) {
    const app = i % 2 === 0 ? 'kv' : 'kv_store';
    const bundle = await makeBundle({ wasm: await buildTestApp(app), package: `${packagePrefix}${i}` });
    const appId = (await client.http.data<{ applicationId: string }>('/admin-api/install-dev-application', { method: 'POST', body: { path: bundle.path, metadata: [] } })).applicationId;
    const ns = (await client.http.data<{ namespaceId: string }>('/admin-api/namespaces', { method: 'POST', body: { applicationId: appId } })).namespaceId;
    const id = (await client.contexts.create({ groupId: ns, applicationId: appId, initializationParams: [] })).contextId;
    await client.rpc.execute(id, 'set', { key: 'k', value: 'v' });
    contexts.push({ app, id });
  }
  return contexts;
}

/**
 * Linux: CPU seconds a process has used so far (user + system, `/proc/<pid>/stat`). CPU per request
 * moves far less with the machine's load than requests per second do, so the HTTP bench prints it
 * beside the throughput ratio.
 */
export async function cpuSecs(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
  // fields after the command name (which may hold spaces) start at state; utime and stime are 14, 15
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}
/** USER_HZ: 100 on every Linux this runs on */
const CLOCK_TICKS = 100;

/** `measure`, also answering the CPU time `pid` spent per request of the measured load (µs). */
/** CPU seconds one thread of a process has used so far (`/proc/<pid>/task/<tid>/stat`; the main thread's tid is the pid). */
export async function threadCpuSecs(pid: number, tid = pid): Promise<number> {
  const stat = await readFile(`/proc/${pid}/task/${tid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

export async function measureWithCpu(spec: LoadSpec, pid: number): Promise<LoadResult & { cpuUsPerRequest: number }> {
  await loadgen({ ...spec, durationSecs: 1 });
  const before = await cpuSecs(pid);
  const result = await loadgen({ durationSecs: LOAD_SECS, connections: CONNECTIONS, ...spec });
  const used = (await cpuSecs(pid)) - before;
  return { ...result, cpuUsPerRequest: result.requests > 0 ? (used * 1e6) / result.requests : NaN };
}

/** Linux: a process's resident set now (VmRSS), in MB (10^6 bytes, as the goals are written). */
export async function rssMB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  return (Number(/VmRSS:\s+(\d+) kB/.exec(status)?.[1] ?? NaN) * 1024) / 1e6;
}

export const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

/** One line of the summary table. */
export interface Row {
  measure: string;
  hearth: string;
  baseline: string;
  /** hearth / baseline where that ratio means something */
  ratio?: number;
  goal: string;
  met?: boolean;
}

export const rows: Row[] = [];

export const fmtRps = (r: LoadResult) => `${r.rps.toFixed(0)} req/s (p50 ${r.p50ms} ms)`;

/** The machine's load when a section starts: the figures are only as quiet as it was. */
export function loadNote(): string {
  return `load average ${loadavg()
    .map((l) => l.toFixed(2))
    .join(' ')}`;
}

export function printTable(): void {
  const head: Row = { measure: 'measure', hearth: 'hearth', baseline: 'baseline (same run)', goal: 'goal' };
  const cells = (r: Row) => [r.measure, r.hearth, r.baseline, r.ratio === undefined ? (r === head ? 'ratio' : '') : r.ratio.toFixed(2), r.goal, r === head ? 'met' : r.met === undefined ? '' : r.met ? 'yes' : 'NO'];
  const all = [head, ...rows].map(cells);
  const widths = all[0]!.map((_, i) => Math.max(...all.map((c) => c[i]!.length)));
  const line = (c: string[]) => `| ${c.map((x, i) => x.padEnd(widths[i]!)).join(' | ')} |`;
  console.log(line(all[0]!));
  console.log(`|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`);
  for (const c of all.slice(1)) console.log(line(c));
}
