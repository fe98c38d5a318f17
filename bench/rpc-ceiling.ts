/**
 * The ceiling of bench/rpc.ts (issue #22 goal "JSON-RPC `get` ≥ 0.4 of bare node:http"): what a
 * server with **no overhead of its own** reaches on this machine when each request runs the
 * application's guest call. It is the bare node:http server (bench/bare-server.mjs) plus only the
 * part no JSON-RPC node can skip: the request body goes to a worker thread (as hearth's calls do,
 * so that a guest never blocks the event loop), which parses it, encodes `argsJson`, runs the
 * guest's method on a kept instance against an in-memory store filled like the node's context, and
 * sends the guest's output back, which is answered as a JSON-RPC result. No auth, no routing, no
 * schema, no store, no lock, no cache bookkeeping. The raw guest call's own CPU is what the bare
 * server never spends, so on a machine with few cores this server's ratio to bare is the bound of
 * hearth's: a goal above it cannot be met by cutting hearth's overhead.
 *
 * Run as its own process (`startCeiling`), like the node and the bare server; workers: one per
 * core (BENCH_CEILING_WORKERS to change it). Also the raw guest call itself (`guestCaller`), used
 * by bench/rpc.ts for the CPU bound.
 */
import { spawn } from 'node:child_process';
import http from 'node:http';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { buildTestApp } from '../test/helpers/wasm-apps.ts';
import { compileGuest } from '../src/runtime/compile.ts';
import { execute } from '../src/runtime/execute.ts';
import type { SyncBackend } from '../src/runtime/host-state.ts';
import { InstancePool } from '../src/runtime/instances.ts';
import { DEFAULT_LIMITS } from '../src/runtime/limits.ts';
import { MemoryView } from '../src/runtime/test-support.ts';
import type { Process } from './harness.ts';

export type BenchApp = 'kv_flat' | 'kv_store';

/**
 * The app's methods called in this thread on a kept instance against an in-memory store, after
 * `init` and a fill of `keys` keys (`<prefix>0`…): answers the guest's output bytes (writes applied).
 */
export async function guestCaller(app: BenchApp, keys: number, prefix: string): Promise<(method: string, input: Uint8Array) => Uint8Array | null> {
  const g = await compileGuest(await buildTestApp(app), DEFAULT_LIMITS);
  const view = new MemoryView();
  const backend = {
    hasIndexMeta: false,
    hasBlobs: false,
    get: (space: string, key: Uint8Array) => (space === 'state' ? view.entries.get(Buffer.from(key).toString('hex'))?.[1] : undefined),
    range: () => [],
  } as unknown as SyncBackend;
  const pool = new InstancePool(g.module, g.reuse);
  const ids = { contextId: new Uint8Array(32), executorId: new Uint8Array(32).fill(1), deviceId: new Uint8Array(32) };
  const call = (method: string, input: Uint8Array) => {
    const r = execute(pool, g.exportTypes, { method, input, ...ids, readOnly: false }, backend, DEFAULT_LIMITS);
    if (!r.ok) throw new Error(`${app} ${method}: ${r.message}`);
    view.apply(r.writes);
    return r.output;
  };
  const json = (v: unknown) => new TextEncoder().encode(JSON.stringify(v));
  call('init', json({}));
  if (app === 'kv_flat') call('fill', json({ prefix, from: 0, count: keys }));
  else for (let i = 0; i < keys; i++) call('set', json({ key: `${prefix}${i}`, value: `v${i}` }));
  return call;
}

/** The ceiling server for `app` with `keys` keys, in its own process (this file run with `serve`). */
export function startCeiling(app: BenchApp, keys: number, prefix: string): Promise<Process> {
  const child = spawn(process.execPath, [...process.execArgv, fileURLToPath(import.meta.url), 'serve', app, String(keys), prefix], { stdio: ['ignore', 'pipe', 'inherit'] });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) => reject(new Error(`ceiling server exited with ${code}`)));
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

interface Job {
  id: number;
  body: string;
}
interface Done {
  id: number;
  rpcId: unknown;
  output: string | null;
  error?: string;
}

async function serve(app: BenchApp, keys: number, prefix: string): Promise<void> {
  const count = Number(process.env.BENCH_CEILING_WORKERS ?? availableParallelism());
  // workers do not always inherit the TypeScript loader: register tsx first, then load this file
  const boot = `import(${JSON.stringify(import.meta.resolve('tsx/esm/api'))}).then((m) => { m.register(); return import(${JSON.stringify(import.meta.url)}); });`;
  const workers = Array.from({ length: count }, () => ({ worker: new Worker(boot, { eval: true, workerData: { app, keys, prefix } }), pending: 0 }));
  await Promise.all(workers.map((w) => new Promise<void>((resolve, reject) => {
    w.worker.once('message', () => resolve());
    w.worker.once('error', reject);
  })));
  const waiting = new Map<number, (d: Done) => void>();
  for (const w of workers) {
    w.worker.on('message', (d: Done) => {
      w.pending--;
      waiting.get(d.id)?.(d);
      waiting.delete(d.id);
    });
  }
  let next = 0;
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const id = ++next;
      // the least busy worker, as a pool hands a call to a free one
      const w = workers.reduce((a, b) => (b.pending < a.pending ? b : a));
      w.pending++;
      waiting.set(id, (d) => {
        const body = d.error
          ? JSON.stringify({ jsonrpc: '2.0', id: d.rpcId, error: { type: 'FunctionCallError', data: d.error } })
          : `{"jsonrpc":"2.0","id":${JSON.stringify(d.rpcId)},"result":{"output":${d.output ?? 'null'}}}`;
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
        res.end(body);
      });
      w.worker.postMessage({ id, body: Buffer.concat(chunks).toString('utf8') } satisfies Job);
    });
  });
  server.listen(0, '127.0.0.1', () => {
    const addr = server.address();
    process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}` })}\n`);
  });
  process.on('SIGTERM', () => {
    for (const w of workers) void w.worker.terminate();
    server.close(() => process.exit(0));
  });
}

async function work(): Promise<void> {
  const { app, keys, prefix } = workerData as { app: BenchApp; keys: number; prefix: string };
  const call = await guestCaller(app, keys, prefix);
  const encoder = new TextEncoder();
  const decoder = new TextDecoder();
  parentPort!.on('message', (job: Job) => {
    let rpcId: unknown = null;
    try {
      const rpc = JSON.parse(job.body) as { id?: unknown; params: { method: string; argsJson: unknown } };
      rpcId = rpc.id ?? null;
      const out = call(rpc.params.method, encoder.encode(JSON.stringify(rpc.params.argsJson ?? {})));
      parentPort!.postMessage({ id: job.id, rpcId, output: out ? decoder.decode(out) : null } satisfies Done);
    } catch (e) {
      parentPort!.postMessage({ id: job.id, rpcId, output: null, error: e instanceof Error ? e.message : String(e) } satisfies Done);
    }
  });
  parentPort!.postMessage('ready');
}

if (!isMainThread && (workerData as { app?: string } | null)?.app) await work();
else if (isMainThread && process.argv[1] === fileURLToPath(import.meta.url) && process.argv[2] === 'serve') {
  await serve(process.argv[3] as BenchApp, Number(process.argv[4]), process.argv[5] ?? 'k');
}
