/**
 * A small closed-loop HTTP load generator (keep-alive, fixed concurrency, fixed duration), used by
 * the benchmarks to measure hearth and a baseline in the same run with the same client.
 */
import http from 'node:http';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  rps: number;
  p50ms: number;
  p99ms: number;
}

export interface LoadOptions {
  url: string;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  concurrency?: number;
  durationMs?: number;
  /** a status other than this counts as an error */
  expectStatus?: number;
}

export async function load(opts: LoadOptions): Promise<LoadResult> {
  const target = new URL(opts.url);
  const agent = new http.Agent({ keepAlive: true, maxSockets: opts.concurrency ?? 32 });
  const deadline = Date.now() + (opts.durationMs ?? 3000);
  const latencies: number[] = [];
  let errors = 0;
  const one = () =>
    new Promise<void>((resolve) => {
      const start = process.hrtime.bigint();
      const req = http.request(
        { host: target.hostname, port: target.port, path: target.pathname + target.search, method: opts.method ?? 'GET', headers: opts.headers, agent },
        (res) => {
          res.resume();
          res.on('end', () => {
            latencies.push(Number(process.hrtime.bigint() - start) / 1e6);
            if (res.statusCode !== (opts.expectStatus ?? 200)) errors++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        errors++;
        resolve();
      });
      req.end(opts.body);
    });
  const began = Date.now();
  await Promise.all(
    Array.from({ length: opts.concurrency ?? 32 }, async () => {
      while (Date.now() < deadline) await one();
    }),
  );
  const seconds = (Date.now() - began) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))] ?? 0;
  return { requests: latencies.length, errors, seconds, rps: latencies.length / seconds, p50ms: pct(0.5), p99ms: pct(0.99) };
}
