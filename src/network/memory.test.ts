import { describe, expect, it } from 'vitest';
import { NetworkError, PeerRefusal, type GossipMessage } from './contract.ts';
import { MemoryHub } from './memory.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);
const C = 'c'.repeat(64);
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);
const opts = { timeoutMs: 1_000, maxResponseFrameBytes: 1024 };
const serve = { maxRequestBytes: 64, timeoutMs: 1_000 };

function three() {
  const hub = new MemoryHub();
  const [a, b, c] = [hub.join(A), hub.join(B), hub.join(C)];
  hub.linkAll();
  return { hub, a, b, c };
}

function inbox(): { got: GossipMessage[]; handler: (m: GossipMessage) => void; next: () => Promise<GossipMessage> } {
  const got: GossipMessage[] = [];
  const waiters: ((m: GossipMessage) => void)[] = [];
  return {
    got,
    handler: (m) => {
      got.push(m);
      waiters.shift()?.(m);
    },
    next: () => new Promise((r) => waiters.push(r)),
  };
}

describe('MemoryNetwork gossip', () => {
  it('delivers to subscribed linked peers, never to the publisher', async () => {
    const { a, b, c } = three();
    const [ib, ic, ia] = [inbox(), inbox(), inbox()];
    b.subscribe('t', ib.handler);
    c.subscribe('other', ic.handler);
    a.subscribe('t', ia.handler);
    const next = ib.next();
    expect(await a.publish('t', enc('hi'))).toBe(1);
    const m = await next;
    expect([m.from, m.topic, dec(m.data)]).toEqual([A, 't', 'hi']);
    await new Promise((r) => setImmediate(r));
    expect(ic.got).toHaveLength(0);
    expect(ia.got).toHaveLength(0);
    expect(a.topicPeers('t')).toEqual([B]);
  });

  it('does not cross a partition, and an unsubscribed handler hears nothing', async () => {
    const { hub, a, b } = three();
    const ib = inbox();
    const off = b.subscribe('t', ib.handler);
    hub.partition([A], [B, C]);
    expect(await a.publish('t', enc('x'))).toBe(0);
    hub.link(A, B);
    off();
    expect(await a.publish('t', enc('y'))).toBe(0);
    await new Promise((r) => setImmediate(r));
    expect(ib.got).toHaveLength(0);
  });

  it('refuses an oversized message and counts a throwing handler as dropped', async () => {
    const { a, b } = three();
    await expect(a.publish('t', new Uint8Array(1024 * 1024 + 1))).rejects.toMatchObject({ kind: 'too_large' });
    b.subscribe('t', () => {
      throw new Error('bad');
    });
    await a.publish('t', enc('x'));
    await new Promise((r) => setTimeout(r, 5));
    expect(b.dropped).toBe(1);
  });

  it('reports peer connections and disconnections', () => {
    const hub = new MemoryHub();
    const a = hub.join(A);
    hub.join(B);
    const events: string[] = [];
    a.onPeer((e) => events.push(`${e.type}:${e.peer.slice(0, 1)}`));
    hub.link(A, B);
    expect(a.peers()).toEqual([B]);
    hub.leave(B);
    expect(events).toEqual(['connected:b', 'disconnected:b']);
    expect(a.peers()).toEqual([]);
  });

  it('dials a node by its address', async () => {
    const hub = new MemoryHub();
    const a = hub.join(A);
    const b = hub.join(B);
    expect(await a.dial(b.addresses()[0]!, { timeoutMs: 100 })).toBe(B);
    expect(hub.linked(A, B)).toBe(true);
    await expect(a.dial(`/memory/${C}`, { timeoutMs: 100 })).rejects.toMatchObject({ kind: 'unreachable' });
  });
});

describe('MemoryNetwork requests', () => {
  it('answers one frame, or a stream of frames', async () => {
    const { a, b } = three();
    b.handle('/echo', async (req, ctx) => enc(`${ctx.peer.slice(0, 1)}:${dec(req)}`), serve);
    b.handle('/count', async () => (async function* () {
      for (let i = 0; i < 3; i++) yield enc(String(i));
    })(), serve);
    expect(dec(await a.request(B, '/echo', enc('x'), opts))).toBe('a:x');
    const frames: string[] = [];
    for await (const f of a.requestStream(B, '/count', enc(''), opts)) frames.push(dec(f));
    expect(frames).toEqual(['0', '1', '2']);
  });

  it('fails with the contract kinds', async () => {
    const { hub, a, b } = three();
    b.handle('/refuse', async () => {
      throw new PeerRefusal('not a member');
    }, serve);
    b.handle('/crash', async () => {
      throw new Error('local secret detail');
    }, serve);
    b.handle('/slow', (_req, ctx) => new Promise((_r, reject) => ctx.signal.addEventListener('abort', () => reject(new Error('gone')))), serve);
    b.handle('/big', async () => new Uint8Array(2048), serve);
    const kind = (p: Promise<unknown>) => p.then(() => 'ok', (e: NetworkError) => `${e.kind}:${e.message}`);
    expect(await kind(a.request(B, '/refuse', enc(''), opts))).toBe('refused:not a member');
    expect(await kind(a.request(B, '/crash', enc(''), opts))).toBe('refused:the peer could not answer the request');
    expect(await kind(a.request(B, '/nothing', enc(''), opts))).toMatch(/^unsupported:/);
    expect(await kind(a.request(B, '/slow', enc(''), { ...opts, timeoutMs: 20 }))).toMatch(/^timeout:/);
    expect(await kind(a.request(B, '/big', enc(''), opts))).toMatch(/^too_large:/);
    const ac = new AbortController();
    const aborted = kind(a.request(B, '/slow', enc(''), { ...opts, signal: ac.signal }));
    ac.abort();
    expect(await aborted).toMatch(/^aborted:/);
    hub.unlink(A, B);
    expect(await kind(a.request(B, '/refuse', enc(''), opts))).toMatch(/^unreachable:/);
  });

  it('refuses an oversized request and penalizes its sender on the responder', async () => {
    const { a, b } = three();
    b.handle('/echo', async (req) => req, serve);
    await expect(a.request(B, '/echo', new Uint8Array(65), opts)).rejects.toBeInstanceOf(NetworkError);
    expect(b.penalties).toEqual([{ peer: A, reason: '/echo: oversized request' }]);
  });

  it('bounds concurrent inbound exchanges per peer', async () => {
    const { a, b } = three();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    b.handle('/gate', async () => {
      await gate;
      return enc('done');
    }, { ...serve, maxInboundPerPeer: 1 });
    const first = a.request(B, '/gate', enc(''), opts);
    await new Promise((r) => setImmediate(r));
    await expect(a.request(B, '/gate', enc(''), opts)).rejects.toMatchObject({ kind: 'refused' });
    release();
    expect(dec(await first)).toBe('done');
  });
});
