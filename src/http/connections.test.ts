/**
 * The connection governor (connections.ts, issue #23 section 1): per-address quota, reserved slots,
 * idle sockets near the cap, body deadlines, and one aggregated log line. Sockets and requests are
 * stand-ins driven by a fake clock; test/e2e/slow-body.e2e.test.ts drives a real node.
 */
import { EventEmitter } from 'node:events';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ConnectionGovernor, IDLE_UNDER_PRESSURE_MS, LIGHT_HOLDER, resolveConnectionPolicy, type ConnectionPolicy } from './connections.ts';

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
  it('closes connections beyond the per-address quota at once; other addresses are still admitted', () => {
    const { g } = governor();
    const mine = Array.from({ length: 12 }, () => sock('10.0.0.1'));
    expect(mine.map((s) => g.admit(s))).toEqual([...Array(10).fill(true), false, false]);
    expect(mine.filter((s) => s.closedByUs)).toHaveLength(2);
    expect(g.admit(sock('::ffff:10.0.0.1'))).toBe(false); // the same client over IPv4-mapped IPv6
    expect(g.admit(sock('10.0.0.2'))).toBe(true);
    mine[0]!.destroy(); // a slot of the address frees
    expect(g.admit(sock('10.0.0.1'))).toBe(true);
    expect(g.closedBy('per_address')).toBe(3);
    g.stop();
  });

  it('keeps the reserved slots for addresses holding few connections', () => {
    const { g } = governor();
    // three addresses of 10 and one of 5 fill the cap up to its reserve (40 - 5 = 35)
    for (let a = 0; a < 3; a++) for (let i = 0; i < 10; i++) expect(g.admit(sock(`10.0.1.${a}`, 1))).toBe(true);
    for (let i = 0; i < 5; i++) expect(g.admit(sock('10.0.1.9', 1))).toBe(true);
    expect(g.admit(sock('10.0.1.9', 1))).toBe(true); // holds 5 < LIGHT_HOLDER: a reserved slot
    for (let i = 0; i < 2; i++) expect(g.admit(sock('10.0.2.1', 1))).toBe(true); // a new client too
    for (let i = 0; i < 2; i++) expect(g.admit(sock('10.0.1.9', 1))).toBe(true); // now 8
    expect(g.admit(sock('10.0.1.9', 1))).toBe(false); // holds LIGHT_HOLDER: no more reserved slots
    expect(g.closedBy('reserved')).toBe(1);
    expect(g.closedBy('per_address')).toBe(0);
    expect(g.open).toBe(40);
    g.stop();
  });

  it('near the cap, closes connections that never sent a byte after a second; spares those that did', () => {
    const { g, advance } = governor();
    const idle = Array.from({ length: 36 }, (_, i) => sock(`10.0.3.${i % 9}`));
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
