/**
 * Benchmark (issue: foundation): authenticated `GET /admin-api/health` requests/s against a bare
 * node:http hello-world measured in the same run, and the ratio (goal >= 0.7). Also reports a
 * route whose guard verifies the token against the store (`GET /admin/identity`).
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { createClient, MemoryTokenStore } from '../src/client/index.ts';
import { makeHome, ROOT, spawnNode } from '../test/helpers/node.ts';
import { load, type LoadResult } from './load.ts';

function startBare(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'bench/bare-server.ts')], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve) => {
    child.stdout.once('data', (d: Buffer) => resolve({ url: JSON.parse(d.toString()).url, stop: () => child.kill('SIGTERM') }));
  });
}

const fmt = (name: string, r: LoadResult) =>
  `${name.padEnd(34)} ${r.rps.toFixed(0).padStart(8)} req/s   p50 ${r.p50ms.toFixed(2)} ms   p99 ${r.p99ms.toFixed(2)} ms   errors ${r.errors}`;

export async function benchAuthHealth(durationMs = 3000): Promise<{ ratio: number }> {
  const paths = await makeHome();
  const node = await spawnNode(['run', '--home', join(paths.dir, '..'), '--node', 'test', '--log-level', 'warn'], {
    MERO_AUTH_ADMIN_USER: 'dev',
    MERO_AUTH_ADMIN_PASSWORD: 'dev-password',
  });
  const bare = await startBare();
  try {
    const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
    const { accessToken } = await client.auth.login({ username: 'dev', password: 'dev-password' });
    const headers = { authorization: `Bearer ${accessToken}` };
    await load({ url: `${bare.url}/`, durationMs: 500 }); // warm-up
    await load({ url: `${node.url}/admin-api/health`, headers, durationMs: 500 });
    const baseline = await load({ url: `${bare.url}/`, durationMs });
    const health = await load({ url: `${node.url}/admin-api/health`, headers, durationMs });
    const identity = await load({ url: `${node.url}/admin/identity`, headers, durationMs });
    const ratio = health.rps / baseline.rps;
    console.log(fmt('bare node:http hello-world', baseline));
    console.log(fmt('GET /admin-api/health (bearer)', health));
    console.log(fmt('GET /admin/identity (verified)', identity));
    console.log(`ratio health / bare: ${ratio.toFixed(2)} (goal >= 0.70) ${ratio >= 0.7 ? 'met' : 'NOT met'}`);
    return { ratio };
  } finally {
    bare.stop();
    node.child.kill('SIGTERM');
    await node.exited;
  }
}
