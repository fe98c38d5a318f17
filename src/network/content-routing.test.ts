/**
 * Content keys in the DHT (docs/network.md "Blob providers in the DHT"): a blob id names a CIDv1
 * `raw` over its sha2-256 multihash; a libp2p node without the DHT refuses to announce and finds
 * nothing; one with no DHT peer says so at once instead of waiting out its deadline.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { cidOfKey } from './content-routing.ts';
import { TestNodes } from './test-nodes.ts';

const KEY = 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'; // SHA-256("")

describe('content keys', () => {
  it('a blob id is a CIDv1 of codec raw over its sha2-256 multihash', () => {
    const cid = cidOfKey(KEY);
    expect(cid.version).toBe(1);
    expect(cid.code).toBe(0x55);
    expect(cid.multihash.code).toBe(0x12);
    expect(Buffer.from(cid.multihash.digest).toString('hex')).toBe(KEY);
    // the CID every IPFS tool gives the empty raw block
    expect(cid.toString()).toBe('bafkreihdwdcefgh4dqkjv67uzcmw7ojee6xedzdetojuzjevtenxquvyku');
    for (const bad of ['', 'E3'.repeat(32), 'ab'.repeat(31), 'zz'.repeat(32)]) expect(() => cidOfKey(bad)).toThrow(/not a content key/);
  });
});

describe('content routing on the libp2p network', () => {
  const nodes = new TestNodes();
  afterEach(() => nodes.teardown());

  it('without the DHT: announcing is unsupported and a lookup yields nothing', async () => {
    const a = await nodes.start({ internet: { dht: false } });
    await expect(a.provide(KEY)).rejects.toMatchObject({ name: 'PeerNetworkError', kind: 'unsupported' });
    const found: string[] = [];
    for await (const p of a.findProviders(KEY, { timeoutMs: 1_000, max: 5 })) found.push(p);
    expect(found).toEqual([]);
    await a.unprovide(KEY); // never rejects
  });

  it('with the DHT but no peer: announcing fails at once (unreachable), not at its 60 s deadline', async () => {
    const a = await nodes.start();
    await expect(a.provide(KEY)).rejects.toMatchObject({ name: 'PeerNetworkError', kind: 'unreachable' });
    const found: string[] = [];
    for await (const p of a.findProviders(KEY, { timeoutMs: 1_000, max: 5 })) found.push(p);
    expect(found).toEqual([]);
  });
});
