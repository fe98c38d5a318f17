import './polyfill.ts';
import type { Connection, PeerId, Stream } from '@libp2p/interface';
import { describe, expect, it } from 'vitest';
import { dialProtocolRetrying, openConnectionTo, type StreamOpener } from './dial-retry.ts';

const ID = { toString: () => '12D3KooWpeer' } as unknown as PeerId;

/** a connection that records the streams asked of it, or fails them with `fail` */
function conn(name: string, o: { limited?: boolean; status?: Connection['status']; fail?: string } = {}) {
  const asked: { protocol: string; runOnLimitedConnection?: boolean }[] = [];
  const c = {
    name,
    status: o.status ?? 'open',
    limits: o.limited ? { bytes: 1024n } : undefined,
    newStream: async (protocol: string, opts: { runOnLimitedConnection?: boolean }) => {
      asked.push({ protocol, runOnLimitedConnection: opts.runOnLimitedConnection });
      if (o.fail) throw new Error(o.fail);
      return { on: name } as unknown as Stream;
    },
  };
  return { c: c as unknown as Connection, asked };
}

/** a node holding `connections`; its `dialProtocol` (libp2p's: a new dial, a new circuit) is counted */
function node(connections: Connection[]) {
  const n = {
    dials: 0,
    getConnections: () => connections,
    dialProtocol: async () => {
      n.dials++;
      return { on: 'dialed' } as unknown as Stream;
    },
  };
  return n;
}

const on = (s: Stream) => (s as unknown as { on: string }).on;

describe('a stream to a peer', () => {
  it('opens on the relayed connection the peer already has, never dialing a new circuit', async () => {
    const relayed = conn('relayed', { limited: true });
    const n = node([relayed.c]);
    expect(on(await dialProtocolRetrying(n as unknown as StreamOpener, ID, '/p/1', AbortSignal.timeout(1_000)))).toBe('relayed');
    expect(n.dials).toBe(0);
    expect(relayed.asked).toEqual([{ protocol: '/p/1', runOnLimitedConnection: true }]);
  });

  it('prefers a direct connection to a relayed one, skips connections not open, and dials when none is open', async () => {
    const relayed = conn('relayed', { limited: true });
    const direct = conn('direct');
    const closing = conn('closing', { status: 'closing' });
    expect(openConnectionTo(node([relayed.c, closing.c, direct.c]), ID)).toBe(direct.c);
    expect(openConnectionTo(node([closing.c, relayed.c]), ID)).toBe(relayed.c);
    expect(openConnectionTo(node([closing.c]), ID)).toBeUndefined();
    const n = node([closing.c]);
    expect(on(await dialProtocolRetrying(n as unknown as StreamOpener, ID, '/p/1', AbortSignal.timeout(1_000)))).toBe('dialed');
    expect(n.dials).toBe(1);
  });

  it('tries again when the connection closed under the new stream, and not for any other failure', async () => {
    const dying = conn('dying', { limited: true, fail: 'The connection is "closing" and not "open"' });
    const connections = [dying.c];
    const n = node(connections);
    setTimeout(() => connections.splice(0, 1, conn('fresh', { limited: true }).c), 50); // the redial's circuit
    expect(on(await dialProtocolRetrying(n as unknown as StreamOpener, ID, '/p/1', AbortSignal.timeout(2_000)))).toBe('fresh');
    const refused = conn('refused', { fail: 'protocol selection failed' });
    await expect(dialProtocolRetrying(node([refused.c]) as unknown as StreamOpener, ID, '/p/1', AbortSignal.timeout(1_000))).rejects.toThrow('protocol selection failed');
    expect(refused.asked).toHaveLength(1);
  });
});
