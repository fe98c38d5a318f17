/**
 * What the start-up benches (startup.ts, startup-ab.ts, restart.ts) do with a spawned process: a
 * free port to give it, polling it until it answers, and its first JSON-RPC call as a client sends it.
 */
import type { ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';

/** A port free on 127.0.0.1 now (listened on for an instant). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

/** Polls `url` every 2 ms until it answers 200: the milliseconds since `t0`. */
export async function firstOk(url: string, t0: number, child: ChildProcess): Promise<number> {
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

/** `execute` `get` of key `k` through `POST /jsonrpc`, as a client sends it: send to answer in ms. */
export async function timedGet(url: string, token: string, contextId: string): Promise<number> {
  const t0 = performance.now();
  const res = await fetch(`${url}/jsonrpc`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'execute', params: { contextId, method: 'get', argsJson: { key: 'k' } } }),
  });
  const body = (await res.json()) as { result?: unknown; error?: unknown };
  const ms = performance.now() - t0;
  if (res.status !== 200 || body.error !== undefined || body.result === undefined) throw new Error(`the first call answered ${res.status} ${JSON.stringify(body)}`);
  return ms;
}
