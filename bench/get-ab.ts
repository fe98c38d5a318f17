/**
 * A/B of builds for the HTTP bench's request (issue #33, "authenticated GET >= 0.7 of bare"): the
 * compiled node of two checkouts and bench/bare-server.mjs, driven in alternating rounds by the same
 * external load (`GET /admin-api/peers` with the admin's bearer token, 32 connections); per round
 * each process's CPU per request and requests/s, then the medians and each build's ratio to bare.
 *
 * AB_ROOTS (comma-separated checkouts holding a built `bin/hearth.js` + `dist/`; default: a copy of
 * the base build in /tmp/get2-base and this checkout), AB_ROUNDS (3), AB_SECS (4), AB_FLAGS (Node.js
 * flags per root, `|`-separated).
 * `npx tsx bench/get-ab.ts`
 */
import { loadavg } from 'node:os';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { createClient, MemoryTokenStore } from '../src/client/index.ts';
import { makeHome, ROOT, spawnNode } from '../test/helpers/node.ts';
import { ADMIN_ENV, cpuSecs, loadgen, median, startBare, CONNECTIONS } from './harness.ts';

interface Target { name: string; url: string; pid: number; headers?: Record<string, string>; stop(): Promise<void>; cpu: number[]; rps: number[] }

async function startRoot(root: string, flags = ''): Promise<Target> {
  const paths = await makeHome();
  const home = join(paths.dir, '..');
  const wrap = ['sh', '-c', `n="$0"; shift; exec "$n" ${flags} ${root}/bin/hearth.js "$@"`];
  const spawned = await spawnNode(['run', '--home', home, '--node', 'test'], { ...ADMIN_ENV, HEARTH_LOG: '' }, 60_000, wrap);
  const client = createClient({ baseUrl: spawned.url, tokenStore: new MemoryTokenStore() });
  const { accessToken } = await client.auth.login({ username: ADMIN_ENV.MERO_AUTH_ADMIN_USER, password: ADMIN_ENV.MERO_AUTH_ADMIN_PASSWORD });
  return {
    name: `${root}${flags ? ` ${flags}` : ''}`, url: `${spawned.url}/admin-api/peers`, pid: spawned.child.pid!, headers: { authorization: `Bearer ${accessToken}` }, cpu: [], rps: [],
    stop: async () => { spawned.child.kill('SIGTERM'); await spawned.exited; await rm(home, { recursive: true, force: true }); },
  };
}

const roots = (process.env.AB_ROOTS ?? `/tmp/get2-base,${ROOT}`).split(',');
const flags = (process.env.AB_FLAGS ?? '').split('|');
const rounds = Number(process.env.AB_ROUNDS ?? 3);
const secs = Number(process.env.AB_SECS ?? 4);
const targets: Target[] = [];
try {
  const bare = await startBare();
  targets.push({ name: 'bare', url: `${bare.url}/`, pid: bare.pid, stop: bare.stop, cpu: [], rps: [] });
  for (const [i, r] of roots.entries()) targets.push(await startRoot(r, flags[i] ?? ''));
  for (const t of targets) await loadgen({ url: t.url, headers: t.headers, durationSecs: 1, connections: CONNECTIONS });
  console.log(`# GET A/B, ${rounds} rounds of ${secs} s, load average at start ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
  for (let i = 0; i < rounds; i++) {
    const order = i % 2 === 0 ? targets : [...targets].reverse();
    for (const t of order) {
      const before = await cpuSecs(t.pid);
      const res = await loadgen({ url: t.url, headers: t.headers, durationSecs: secs, connections: CONNECTIONS });
      const used = (await cpuSecs(t.pid)) - before;
      if (res.errors) console.log(`  ${t.name}: ${res.errors} errors`);
      t.cpu.push((used * 1e6) / res.requests);
      t.rps.push(res.rps);
      console.log(`round ${i + 1} ${t.name.padEnd(40)} ${res.rps.toFixed(0).padStart(6)} req/s ${((used * 1e6) / res.requests).toFixed(1).padStart(6)} µs CPU/request`);
    }
  }
  const b = targets[0]!;
  console.log(`# medians (load average now ${loadavg().map((x) => x.toFixed(2)).join(' ')})`);
  for (const t of targets) {
    console.log(`${t.name.padEnd(40)} ${median(t.rps).toFixed(0).padStart(6)} req/s ${median(t.cpu).toFixed(1).padStart(6)} µs CPU/request (least ${Math.min(...t.cpu).toFixed(1)}); of bare: req/s ${(median(t.rps) / median(b.rps)).toFixed(2)}, CPU bare/this ${(median(b.cpu) / median(t.cpu)).toFixed(2)}`);
  }
} finally {
  for (const t of targets) await t.stop();
}
