/**
 * The connection governor (connections.ts, issue #23 section 1): per-address quota, reserved slots,
 * idle sockets near the cap, body deadlines, and one aggregated log line. Sockets and requests are
 * stand-ins driven by a fake clock; test/e2e/http/slow-body.e2e.test.ts drives a real node.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import net from 'node:net';
import pino from 'pino';
import { buildApp } from './app.ts';
import { Metrics } from './metrics.ts';
import {
  ConnectionGovernor,
  EVICT_MIN_AGE_MS,
  FINISHED_WINDOW_MS,
  groupOf,
  IDLE_UNDER_PRESSURE_MS,
  LIGHT_GROUP,
  LIGHT_HOLDER,
  MAX_FINISHERS,
  MAX_REFUSING,
  REFUSAL_GRACE_MS,
  REFUSING_PER_ADDRESS,
  resolveConnectionPolicy,
  type ConnectionPolicy,
} from './connections.ts';

type FakeSocket = Socket & { closedByUs: boolean };

function sock(address: string, bytesRead = 0): FakeSocket {
  const s = new EventEmitter() as unknown as FakeSocket & { bytesRead: number; remoteAddress: string; destroyed: boolean };
  Object.assign(s, { remoteAddress: address, bytesRead, destroyed: false, closedByUs: false });
  s.destroy = (() => {
    if (!s.destroyed) {
      s.destroyed = true;
      s.closedByUs = true;
      s.emit('close');
    }
    return s;
  }) as never;
  return s;
}

const request = (socket: Socket) => ({ socket, complete: false }) as unknown as IncomingMessage & { complete: boolean };

const POLICY: ConnectionPolicy = { maxConnections: 40, perAddress: 10, reserved: 5, bodyTimeoutMs: 2_000, bodyMinBytesPerSec: 1_000 };

function governor(policy = POLICY) {
  let now = 0;
  const lines: unknown[] = [];
  const g = new ConnectionGovernor(policy, { warn: (obj: unknown) => lines.push(obj) } as never, () => now);
  return { g, lines, advance: (ms: number) => (now += ms) };
}

describe('resolveConnectionPolicy', () => {
  const base = { maxConnectionsPerAddress: 0, reservedConnections: 0, bodyTimeoutSecs: 10, bodyMinBytesPerSec: 16384 };
  it('derives an eighth of the cap as reserve and a quarter (at least 16) per address, always below cap minus reserve', () => {
    expect(resolveConnectionPolicy(8192, base)).toMatchObject({ maxConnections: 8192, reserved: 1024, perAddress: 2048, bodyTimeoutMs: 10_000 });
    expect(resolveConnectionPolicy(8, base)).toMatchObject({ reserved: 1, perAddress: 7 });
    expect(resolveConnectionPolicy(100, { ...base, maxConnectionsPerAddress: 500 })).toMatchObject({ reserved: 12, perAddress: 88 });
    expect(resolveConnectionPolicy(0, base)).toMatchObject({ maxConnections: 0, reserved: 0, perAddress: 16 });
  });
});

describe('ConnectionGovernor', () => {
  it('refuses connections beyond the per-address quota; other addresses are still admitted', () => {
    const { g, advance } = governor();
    const mine = Array.from({ length: 12 }, () => sock('10.0.0.1'));
    expect(mine.map((s) => g.admit(s))).toEqual([...Array(10).fill(true), false, false]);
    // the two refused are kept a moment to be answered 503 (not held: they count for nothing)
    expect(mine.slice(10).map((s) => g.refusal(s))).toEqual(['per_address', 'per_address']);
    expect(g.open).toBe(10);
    expect(g.admit(sock('::ffff:10.0.0.1'))).toBe(false); // the same client over IPv4-mapped IPv6
    expect(g.admit(sock('10.0.0.2'))).toBe(true);
    mine[0]!.destroy(); // a slot of the address frees
    expect(g.admit(sock('10.0.0.1'))).toBe(true);
    expect(g.closedBy('per_address')).toBe(3);
    advance(REFUSAL_GRACE_MS);
    g.sweep(); // no request came in time: closed
    expect(mine.slice(10).every((s) => s.closedByUs)).toBe(true);
    g.stop();
  });

  it('keeps at most a few refused connections per address, and a bounded number in all, to answer them (issue #37 item 8)', () => {
    const { g, advance } = governor({ ...POLICY, perAddress: 1 });
    const one = Array.from({ length: 1 + REFUSING_PER_ADDRESS + 3 }, () => sock('10.0.7.1'));
    for (const s of one) g.admit(s);
    const kept = one.filter((s) => g.refusal(s) === 'per_address');
    expect(kept).toHaveLength(REFUSING_PER_ADDRESS);
    expect(one.filter((s) => s.closedByUs)).toHaveLength(3); // beyond: closed at once, as before
    // many addresses: at most MAX_REFUSING kept in all
    const many = Array.from({ length: MAX_REFUSING * 3 }, (_, i) => sock(`10.1.${i % MAX_REFUSING}.1`));
    for (const s of many) g.admit(s);
    const keptMany = many.filter((s) => g.refusal(s) !== undefined).length;
    expect(keptMany).toBe(MAX_REFUSING - REFUSING_PER_ADDRESS);
    g.answered(kept[0]!);
    expect(g.answeredBy('per_address')).toBe(1);
    advance(REFUSAL_GRACE_MS);
    g.sweep();
    expect(kept.slice(1).every((s) => s.closedByUs)).toBe(true);
    expect(kept[0]!.closedByUs).toBe(false); // answered: its answer is given time to leave
    g.stop();
  });

  it('keeps the reserved slots for addresses holding few connections', () => {
    const { g } = governor();
    // three addresses of 10 and one of 5 fill the cap up to its reserve (40 - 5 = 35); each in a /24 of its own
    for (let a = 0; a < 3; a++) for (let i = 0; i < 10; i++) expect(g.admit(sock(`10.1${a}.1.1`, 1))).toBe(true);
    for (let i = 0; i < 5; i++) expect(g.admit(sock('10.19.1.1', 1))).toBe(true);
    g.finished('10.19.1.1'); // it finishes requests: a client, not a trickle
    expect(g.admit(sock('10.19.1.1', 1))).toBe(true); // holds 5 < LIGHT_HOLDER: a reserved slot
    expect(g.admit(sock('10.20.1.1', 1))).toBe(true); // a new client too
    g.finished('10.20.1.1');
    expect(g.admit(sock('10.20.1.1', 1))).toBe(true); // and its second, once it finished a request
    for (let i = 0; i < 2; i++) expect(g.admit(sock('10.19.1.1', 1))).toBe(true); // now 8
    expect(g.admit(sock('10.19.1.1', 1))).toBe(false); // holds LIGHT_HOLDER: no more reserved slots
    expect(g.closedBy('reserved')).toBe(1);
    expect(g.closedBy('per_address')).toBe(0);
    expect(g.open).toBe(40);
    g.stop();
  });

  it('keeps the reserved slots for newcomers and for addresses that finish requests, not for trickles (issue #37 item 4)', () => {
    const { g, advance } = governor();
    // the cap up to its reserve (35): three addresses of 10 and one of 5, in /24s of their own
    for (let a = 0; a < 3; a++) for (let i = 0; i < 10; i++) g.admit(sock(`10.1${a}.1.1`, 1));
    for (let i = 0; i < 5; i++) g.admit(sock('10.30.1.1', 1));
    // many light addresses, each opening bodies that never end: one reserved slot each at most
    expect(g.admit(sock('10.40.1.1', 1))).toBe(true); // a newcomer
    expect(g.admit(sock('10.40.1.1', 1))).toBe(false); // holds one, finished nothing
    expect(g.admit(sock('10.30.1.1', 1))).toBe(false); // holds five, finished nothing
    expect(g.closedBy('reserved')).toBe(2);
    // an address whose requests finish keeps its claim while its last one is recent
    const req = request(sock('10.30.1.1', 1));
    g.expectBody(req, 2_000);
    req.complete = true;
    g.sweep();
    expect(g.admit(sock('10.30.1.1', 1))).toBe(true);
    advance(FINISHED_WINDOW_MS + 1);
    expect(g.admit(sock('10.30.1.1', 1))).toBe(false); // long ago: no longer
    g.stop();
  });

  it('remembers a bounded number of addresses that finished requests, forgetting the oldest', () => {
    const { g } = governor();
    for (let a = 0; a < 3; a++) for (let i = 0; i < 10; i++) g.admit(sock(`10.1${a}.1.1`, 1));
    for (let i = 0; i < 5; i++) g.admit(sock('10.30.1.1', 1));
    g.finished('10.30.1.1');
    for (let i = 0; i < MAX_FINISHERS; i++) g.finished(`fd00::${i.toString(16)}`);
    expect(g.admit(sock('10.30.1.1', 1))).toBe(false); // forgotten: 4,096 others came after it
    g.stop();
  });

  it('near the cap, closes connections that never sent a byte after a second; spares those that did', () => {
    const { g, advance } = governor();
    const idle = Array.from({ length: 36 }, (_, i) => sock(`10.3${i % 9}.3.${1 + Math.floor(i / 9)}`)); // one each: newcomers may take the reserve
    const talking = sock('10.0.4.1', 10);
    for (const s of [...idle, talking]) g.admit(s);
    advance(IDLE_UNDER_PRESSURE_MS - 1);
    g.sweep();
    expect(idle.some((s) => s.closedByUs)).toBe(false);
    advance(1);
    g.sweep();
    expect(idle.every((s) => s.closedByUs)).toBe(true);
    expect(talking.closedByUs).toBe(false);
    expect(g.closedBy('idle_under_pressure')).toBe(36);
    g.stop();
  });

  it('closes a connection whose body is not complete by its deadline; a guarded request gets its size at the minimum rate on top', () => {
    const { g, advance } = governor();
    const anon = sock('10.0.5.1', 100);
    const authed = sock('10.0.5.2', 100);
    const done = sock('10.0.5.3', 100);
    for (const s of [anon, authed, done]) g.admit(s);
    const [ra, rb, rc] = [request(anon), request(authed), request(done)];
    for (const r of [ra, rb, rc]) g.expectBody(r, POLICY.bodyTimeoutMs);
    g.extendBody(rb, 5_000); // 2 s + 5,000 bytes at 1,000 B/s = 7 s
    expect(g.awaitsBody(rb)).toBe(true);
    advance(1_999);
    rc.complete = true;
    g.sweep();
    expect([anon.closedByUs, authed.closedByUs, done.closedByUs]).toEqual([false, false, false]);
    advance(1);
    g.sweep();
    expect([anon.closedByUs, authed.closedByUs, done.closedByUs]).toEqual([true, false, false]);
    advance(5_000);
    g.sweep();
    expect(authed.closedByUs).toBe(true);
    expect(done.closedByUs).toBe(false);
    expect(g.closedBy('body_deadline')).toBe(2);
    g.stop();
  });

  it('reports many closures in one log line', () => {
    const { g, lines } = governor();
    for (let i = 0; i < 50; i++) g.admit(sock('10.0.6.1'));
    g.countHeaderDeadline();
    expect(lines).toEqual([]);
    g.report();
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ closed: { per_address: 40, header_deadline: 1 } });
    g.report(); // nothing new: no line
    expect(lines).toHaveLength(1);
    g.stop();
  });
});

describe('address groups and slow bodies near the cap (issue #37 item 4)', () => {
  it('groups IPv4 addresses by /24 and IPv6 by /64', () => {
    expect(groupOf('127.0.3.7')).toBe('127.0.3.0/24');
    expect(groupOf('2001:db8:1:2:aa::1')).toBe('2001:db8:1:2::/64');
    expect(groupOf('2001:db8:1:2:ffff:1:2:3')).toBe('2001:db8:1:2::/64');
    expect(groupOf('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(groupOf('::1')).toBe('0:0:0:0::/64');
    expect(groupOf('2001:0DB8:0001:0002::9')).toBe('2001:db8:1:2::/64');
  });

  it('holds a group to its quota, and counts a heavy group as heavy for the reserve, whatever each address holds', () => {
    const { g } = governor({ ...POLICY, perGroup: 12 });
    // 2 connections from each of 7 addresses of one /64: 12 admitted, then per_group
    const results = Array.from({ length: 14 }, (_, i) => g.admit(sock(`2001:db8:0:1::${(i % 7) + 1}`, 1)));
    expect(results.filter(Boolean)).toHaveLength(12);
    expect(g.closedBy('per_group')).toBe(2);
    g.stop();

    const { g: h } = governor({ ...POLICY, maxConnections: 60, perAddress: 60, reserved: 20 });
    // fill up to the reserve (40) from one /24 of 10 addresses holding 4 each: all light by address
    for (let i = 0; i < 40; i++) expect(h.admit(sock(`10.9.9.${i % 10}`, 1))).toBe(true);
    expect(40).toBeGreaterThanOrEqual(LIGHT_GROUP);
    expect(h.admit(sock('10.9.9.77', 1))).toBe(false); // a new address of the same /24: its group is heavy
    expect(h.closedBy('reserved')).toBe(1);
    expect(h.admit(sock('10.8.8.8', 1))).toBe(true); // elsewhere: light
    h.stop();
  });

  it('near the cap, a new connection evicts the slowest body that had its chance; fast ones and young ones stay', () => {
    const { g, advance } = governor({ ...POLICY, maxConnections: 40, perAddress: 10, reserved: 5 });
    // 35 bodies from 35 /24s (7 connections would be light everywhere): the cap minus the reserve
    const slow = Array.from({ length: 34 }, (_, i) => sock(`10.${i}.0.1`, 100));
    const fast = sock('10.200.0.1', 100);
    for (const s of [...slow, fast]) g.admit(s);
    for (const s of [...slow, fast]) g.expectBody(request(s), 60_000);
    advance(EVICT_MIN_AGE_MS);
    (fast as unknown as { bytesRead: number }).bytesRead = 1_000_000;
    slow.forEach((s, i) => ((s as unknown as { bytesRead: number }).bytesRead = 100 + i)); // slow[0] slowest
    const newcomers = Array.from({ length: 3 }, (_, i) => sock(`10.100.${i}.1`));
    for (const n of newcomers) expect(g.admit(n)).toBe(true);
    expect(slow.slice(0, 3).every((s) => s.closedByUs)).toBe(true);
    expect(slow.slice(3).some((s) => s.closedByUs)).toBe(false);
    expect(fast.closedByUs).toBe(false);
    expect(g.closedBy('slow_body_evicted')).toBe(3);
    expect(g.open).toBe(35);
    g.stop();
  });
});

describe('slow bodies from many loopback addresses on a real server (issue #37 item 4)', () => {
  it('cannot hold the cap: health is answered while 40 addresses × 7 connections trickle bodies', async () => {
    const CAP = 96;
    const app = await buildApp({
      logger: pino({ level: 'silent' }),
      connections: { maxConnections: CAP, headerTimeoutSecs: 30, keepAliveTimeoutSecs: 5, requestTimeoutSecs: 600, bodyTimeoutSecs: 60 },
      routes: (a) => {
        a.get('/admin-api/health', async () => ({ data: { status: 'alive' } }));
        a.post('/slow', async () => ({ ok: true }));
      },
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as net.AddressInfo;
    const attack: net.Socket[] = [];
    try {
      // 40 addresses in 40 /24s, 7 connections each (every one light by address and by group): 280 > CAP
      await Promise.all(
        Array.from({ length: 280 }, (_, i) =>
          new Promise<void>((resolve) => {
            const s = net.connect({ port, host: '127.0.0.1', localAddress: `127.2.${Math.floor(i / 7)}.1` });
            attack.push(s);
            s.on('error', () => resolve());
            s.once('close', () => resolve());
            s.once('connect', () => {
              s.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{');
              resolve();
            });
          }),
        ),
      );
      const trickle = setInterval(() => attack.forEach((s) => s.destroyed || s.write(' ')), 500);
      try {
        await new Promise((r) => setTimeout(r, 1_500));
        let status = 0;
        const started = Date.now();
        while (status !== 200 && Date.now() - started < 5_000) {
          status = await fetch(`http://127.0.0.1:${port}/admin-api/health`, { signal: AbortSignal.timeout(1_000) }).then((r) => r.status, () => 0);
        }
        expect(status).toBe(200);
      } finally {
        clearInterval(trickle);
      }
    } finally {
      for (const s of attack) s.destroy();
      await app.close();
    }
  }, 30_000);
});

describe('a refused connection on a real server (issue #37 item 8)', () => {
  it('is answered 503 with Retry-After when it sends a request, and counted; quiet ones are closed', async () => {
    const registry = new Metrics();
    const app = await buildApp({
      logger: pino({ level: 'silent' }),
      metrics: registry,
      connections: { maxConnections: 64, headerTimeoutSecs: 10, keepAliveTimeoutSecs: 5, requestTimeoutSecs: 60, maxConnectionsPerAddress: 2 },
      routes: (a) => void a.get('/admin-api/health', async () => ({ data: { status: 'alive' } })),
    });
    await app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = app.server.address() as net.AddressInfo;
    const open = () =>
      new Promise<net.Socket>((resolve) => {
        const s = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.61' });
        s.on('error', () => undefined);
        s.once('connect', () => resolve(s));
      });
    const held = [await open(), await open()];
    try {
      await new Promise((r) => setTimeout(r, 100));
      const over = await open();
      const answer = await new Promise<{ text: string; closed: boolean }>((resolve) => {
        let text = '';
        over.on('data', (d: Buffer) => (text += d.toString()));
        over.once('close', () => resolve({ text, closed: true }));
        setTimeout(() => resolve({ text, closed: false }), 5_000);
        over.write('GET /admin-api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(answer.text).toMatch(/^HTTP\/1\.1 503 /);
      expect(answer.text).toMatch(/\r\nretry-after: 2\r\n/i);
      expect(answer.text).toMatch(/Too many connections from this address \(at most 2\)/);
      expect(answer.closed).toBe(true);
      // one that sends nothing is closed after the grace period, unanswered
      const quiet = await open();
      const quietEnd = await new Promise<number>((resolve) => {
        const started = Date.now();
        quiet.once('close', () => resolve(Date.now() - started));
      });
      expect(quietEnd).toBeLessThan(REFUSAL_GRACE_MS + 2_000);
      // the address's held connections still work
      const metrics = await new Promise<string>((resolve) => {
        let text = '';
        held[0]!.on('data', (d: Buffer) => {
          text += d.toString();
          if (text.includes('\r\n\r\n')) resolve(text);
        });
        held[0]!.write('GET /admin-api/health HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(metrics).toMatch(/^HTTP\/1\.1 200 /);
      const counted = await registry.render();
      expect(counted).toMatch(/hearth_http_refusals_answered_total\{reason="per_address"\} 1\n/);
      expect(counted).toMatch(/hearth_http_connections_closed_total\{reason="per_address"\} 2\n/);
    } finally {
      for (const s of held) s.destroy();
      await app.close();
    }
  }, 30_000);
});
