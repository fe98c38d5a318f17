/**
 * Peer routing through the Kademlia DHT (issue #24, `/hearth/kad/1.0.0`): a node that knows only a
 * bootstrap node reaches a member node by its peer key alone; with the DHT off it cannot. The
 * routing table size shows in the status.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { connect, eventually } from './network-port-suite.ts';
import { DHT_PROTOCOL } from './internet.ts';
import { TestNodes } from './test-nodes.ts';

const PROTOCOL = '/hearth/test/hello/1';
const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe('the DHT finds a peer by its key', () => {
  const nodes = new TestNodes();
  afterEach(() => nodes.teardown());

  async function line(internet: { dht: boolean }) {
    // member M and joiner J both know only the bootstrap node S; M and J never dial each other
    const s = await nodes.start({ internet });
    const m = await nodes.start({ internet });
    const j = await nodes.start({ internet });
    m.handle(PROTOCOL, async (req) => enc(`hello ${dec(req)}`), { maxRequestBytes: 64, timeoutMs: 5_000 });
    await connect(m, s);
    await connect(j, s);
    return { s, m, j };
  }

  it('a node knowing only the bootstrap node reaches a member by peer key, and reports its routing table size', async () => {
    const { m, j } = await line({ dht: true });
    await eventually(() => (j.status().internet!.dht?.routingTableSize ?? 0) >= 1, 'J to hold a routing table');
    const answer = await j.request(m.self, PROTOCOL, enc('from J'), { timeoutMs: 15_000, maxResponseFrameBytes: 64 });
    expect(dec(answer)).toBe('hello from J');
    expect(j.peers()).toContain(m.self);
    const conn = j.status().connections.find((c) => c.peer === m.self)!;
    expect(conn.remoteAddress).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+/); // a direct connection, to the address the DHT gave
    expect(j.status().internet!.dht).toMatchObject({ protocol: DHT_PROTOCOL });
  });

  it('with the DHT off, the same request finds no route to the member', async () => {
    const { m, j } = await line({ dht: false });
    await expect(j.request(m.self, PROTOCOL, enc('from J'), { timeoutMs: 5_000, maxResponseFrameBytes: 64 })).rejects.toMatchObject({ name: 'PeerNetworkError' });
    expect(j.peers()).not.toContain(m.self);
    expect(j.status().internet!.dht).toBeUndefined();
  });
});
