/**
 * The header deadline (limits.ts `enforceHeaderDeadline`, issue #17 finding 1), swept on one timer
 * (issue #14): a connection that does not send a request's headers in time is closed, whether it
 * sends nothing, trickles its headers, or idles after an answer; one whose request is in is not.
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import net, { type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { enforceHeaderDeadline, HeaderWatchdog } from './limits.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('HeaderWatchdog', () => {
  it('closes a waiting connection once its deadline passed, never before, and not once disarmed', () => {
    let now = 1_000;
    const w = new HeaderWatchdog(500, () => now);
    const destroyed: string[] = [];
    const sock = (name: string) => ({ destroy: () => destroyed.push(name) }) as unknown as Socket;
    const [a, b, c] = [sock('a'), sock('b'), sock('c')];
    w.arm(a);
    w.arm(b);
    now += 200;
    w.arm(c); // armed later: its deadline is later
    now += 299;
    w.sweep();
    expect(destroyed).toEqual([]);
    w.disarm(b); // its request's headers came in
    now += 1;
    w.sweep();
    expect(destroyed).toEqual(['a']);
    now += 199;
    w.sweep();
    expect(destroyed).toEqual(['a']);
    now += 1;
    w.sweep();
    expect(destroyed).toEqual(['a', 'c']);
    expect(w.size).toBe(0);
    w.stop();
  });

  it('re-arming moves the deadline to the new wait', () => {
    let now = 0;
    const w = new HeaderWatchdog(100, () => now);
    let closed = 0;
    const s = { destroy: () => closed++ } as unknown as Socket;
    w.arm(s);
    now = 90;
    w.disarm(s);
    w.arm(s); // answered, waiting for the next request
    now = 150;
    w.sweep();
    expect(closed).toBe(0);
    now = 190;
    w.sweep();
    expect(closed).toBe(1);
    w.stop();
  });

  it('a response finishing after its socket was detached arms nothing and does not throw (issue #37 item 1)', () => {
    const w = new HeaderWatchdog(100, () => 0);
    const detached = { req: { socket: null } } as unknown as ServerResponse;
    expect(() => w.rearmAfter.call(detached)).not.toThrow();
    const closed = { req: { socket: { destroyed: true } } } as unknown as ServerResponse;
    w.rearmAfter.call(closed);
    expect(w.size).toBe(0);
    const live = { req: { socket: { destroyed: false } } } as unknown as ServerResponse;
    w.rearmAfter.call(live);
    expect(w.size).toBe(1);
    w.stop();
  });
});

describe('enforceHeaderDeadline on a server', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise((r) => server?.close(r));
    server = undefined;
  });

  /** A server whose `/slow` answers after `slowMs`, with a header deadline of `ms`. */
  async function serve(ms: number, slowMs = 0): Promise<number> {
    server = createServer((req, res) => {
      const answer = () => res.end('ok');
      if (req.url === '/slow') setTimeout(answer, slowMs);
      else answer();
    });
    // Node's own header timeout out of the way: the deadline under test is ours
    server.headersTimeout = 60_000;
    server.requestTimeout = 0;
    enforceHeaderDeadline(server, ms);
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    return (server.address() as net.AddressInfo).port;
  }

  function open(port: number): Promise<{ socket: Socket; closed: Promise<void>; isClosed: () => boolean; data: () => string }> {
    return new Promise((resolve, reject) => {
      const socket = net.connect(port, '127.0.0.1');
      let done = false;
      let text = '';
      const closed = new Promise<void>((r) => socket.once('close', () => ((done = true), r())));
      socket.on('data', (d) => (text += d.toString()));
      socket.on('error', () => undefined);
      socket.once('connect', () => resolve({ socket, closed, isClosed: () => done, data: () => text }));
      socket.once('error', reject);
    });
  }

  it('closes a connection that sends nothing, and one that trickles its headers, but not before the deadline', async () => {
    const port = await serve(400);
    const idle = await open(port);
    const slow = await open(port);
    slow.socket.write('GET / HTTP/1.1\r\n');
    const trickle = setInterval(() => slow.socket.write('X-A: b\r\n'), 50);
    await sleep(200);
    expect(idle.isClosed()).toBe(false);
    expect(slow.isClosed()).toBe(false);
    await Promise.all([idle.closed, slow.closed]);
    clearInterval(trickle);
    expect(slow.data()).toBe(''); // closed, never answered
  });

  it('closes a keep-alive connection idling after its answer, and spares a request whose answer takes longer', async () => {
    const port = await serve(300, 700);
    const c = await open(port);
    c.socket.write('GET /slow HTTP/1.1\r\nHost: x\r\n\r\n');
    await sleep(500); // past the deadline while the answer is pending
    expect(c.isClosed()).toBe(false);
    await c.closed; // answered at ~700 ms, then idle for the deadline
    expect(c.data()).toMatch(/^HTTP\/1\.1 200/);
  });
});
