/**
 * Slow request bodies and one address holding connections (issue #23 section 1; docs/security.md
 * "Limits"). A sub-process opens more connections than the per-address quota from 127.0.0.2 (a
 * loopback address of its own, so the node sees a second client), each announcing a 100,000-byte
 * body to the public `POST /auth/token` and trickling it. While it holds its quota a fresh client on
 * 127.0.0.1 logs in and health answers 200; the slow sockets are then closed by the body deadline,
 * and the closures are counted on `/metrics`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createClient, MemoryTokenStore } from '../../../src/client/index.ts';
import { REFUSING_PER_ADDRESS } from '../../../src/http/connections.ts';
import { startTestNode, type TestNode } from '../../helpers/node.ts';

const CAP = 64;
const PER_ADDRESS = 16;
const ATTACK = 80; // beyond the whole cap, not only the quota
const BODY_TIMEOUT_SECS = 4;

/** The attacker: opens `count` sockets from 127.0.0.2, sends headers, then one body byte per 500 ms; reports its open sockets. */
const ATTACKER = `
const net = require('node:net');
const [port, count] = process.argv.slice(1).map(Number);
const open = new Set();
let connected = 0;
for (let i = 0; i < count; i++) {
  const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' });
  s.on('error', () => {});
  s.once('connect', () => {
    connected++;
    open.add(s);
    s.write('POST /auth/token HTTP/1.1\\r\\nHost: 127.0.0.1\\r\\nContent-Type: application/json\\r\\nContent-Length: 100000\\r\\n\\r\\n{');
  });
  s.once('close', () => open.delete(s));
}
setInterval(() => { for (const s of open) s.write(' '); }, 500);
setInterval(() => process.stdout.write(JSON.stringify({ connected, open: open.size }) + '\\n'), 100);
`;

let node: TestNode;
let attacker: ChildProcess | undefined;
let last = { connected: 0, open: 0 };

beforeAll(async () => {
  node = await startTestNode({
    configure: (cfg) =>
      Object.assign(cfg.server, { maxConnections: CAP, maxConnectionsPerAddress: PER_ADDRESS, bodyTimeoutSecs: BODY_TIMEOUT_SECS, headerTimeoutSecs: 30 }),
  });
}, 60_000);
afterAll(async () => {
  attacker?.kill('SIGKILL');
  await node?.destroy();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}; attacker reports ${JSON.stringify(last)}`);
    await sleep(50);
  }
}

it('a client and health are served while one address trickles bodies, and every slow socket is closed by the body deadline', async () => {
  const port = new URL(node.url).port;
  attacker = spawn(process.execPath, ['-e', ATTACKER, port, String(ATTACK)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let buf = '';
  attacker.stdout!.on('data', (d: Buffer) => {
    buf += d.toString();
    const lines = buf.split('\n');
    buf = lines.pop()!;
    if (lines.length) last = JSON.parse(lines[lines.length - 1]!);
  });
  // every connect answered (accepted, then held or closed at once by the node)
  await until('the attack to connect', () => last.connected >= ATTACK, 10_000);
  await sleep(300);
  // the address holds its quota, no more; a few refused ones are open only until their 503 is out (issue #37 item 8)
  expect(last.open).toBeGreaterThanOrEqual(PER_ADDRESS);
  expect(last.open).toBeLessThanOrEqual(PER_ADDRESS + REFUSING_PER_ADDRESS);

  const client = createClient({ baseUrl: node.url, tokenStore: new MemoryTokenStore() });
  const login = await client.auth.login({ username: node.adminUser, password: node.adminPassword });
  expect(login.accessToken).toBeTruthy();
  const health = await fetch(`${node.url}/admin-api/health`, { signal: AbortSignal.timeout(5_000) });
  expect(health.status).toBe(200);
  expect(last.open).toBeGreaterThan(0); // served *during* the attack

  // the trickling bodies are closed at the body deadline (plus a sweep), not the 600 s request timeout
  await until('every slow socket to be closed', () => last.open === 0, (BODY_TIMEOUT_SECS + 6) * 1000);

  const metrics = await (await fetch(`${node.url}/metrics`)).text();
  const closed = (reason: string) => Number(metrics.match(new RegExp(`hearth_http_connections_closed_total\\{reason="${reason}"\\} (\\d+)`))?.[1] ?? -1);
  expect(closed('per_address')).toBe(ATTACK - PER_ADDRESS);
  expect(closed('body_deadline')).toBe(PER_ADDRESS);
  expect(Number(metrics.match(/hearth_http_refusals_answered_total\{reason="per_address"\} (\d+)/)?.[1])).toBe(REFUSING_PER_ADDRESS);
}, 60_000);

it('idle sockets from many addresses that fill the cap are closed within seconds, not the header timeout', async () => {
  const port = Number(new URL(node.url).port);
  // 16 addresses × 4 sockets = the whole cap (64); none sends a byte. Each address in a /24 of its
  // own: addresses of one /24 are one group (issue #37 item 4), held to half the cap together
  const sockets = await Promise.all(
    Array.from({ length: CAP }, (_, i) =>
      new Promise<net.Socket>((resolve) => {
        const s = net.connect({ port, host: '127.0.0.1', localAddress: `127.0.${20 + (i % 16)}.1` });
        s.on('error', () => undefined);
        s.once('connect', () => resolve(s));
        s.once('close', () => resolve(s));
      }),
    ),
  );
  const started = Date.now();
  try {
    let status = 0;
    // the header timeout is 30 s here: only the rule for idle sockets near the cap frees slots
    while (status !== 200 && Date.now() - started < 5_000) {
      status = await fetch(`${node.url}/admin-api/health`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.status, () => 0);
      if (status !== 200) await sleep(100);
    }
    expect(status).toBe(200);
    await until('the idle sockets to be closed', () => sockets.filter((s) => !s.destroyed && s.readyState === 'open').length === 0, 5_000);
  } finally {
    for (const s of sockets) s.destroy();
  }
}, 30_000);
