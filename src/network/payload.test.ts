import { describe, expect, it } from 'vitest';
import { namespaceTopic } from './topic-names.ts';
import { MemoryHub, type MemoryNetwork } from './memory.ts';
import { channelOfKind, channelOfTopic, type PayloadCount } from './payload.ts';
import { StreamRouter, encodeJson } from './router.ts';
import { eventually } from './network-port-suite.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

const bytesOf = (list: PayloadCount[] | undefined, channel: string, direction: string) => list?.find((p) => p.channel === channel && p.direction === direction)?.bytes;

describe('payload counters', () => {
  it('name channels by topic and request kind', () => {
    expect(channelOfTopic('c'.repeat(64))).toBe('gossip');
    expect(channelOfTopic(namespaceTopic('n'.repeat(64)))).toBe('governance');
    expect(channelOfKind('ContextBackfillRequest')).toBe('backfill');
    expect(channelOfKind('ContextHeadsRequest')).toBe('sync');
    expect(channelOfKind('ContextSnapshotRequest')).toBe('sync');
    expect(channelOfKind('NamespaceBackfillRequest')).toBe('governance');
    expect(channelOfKind('SomethingElse')).toBe('other');
  });

  it('count gossip by topic on both ends, and exchanges by kind on both ends', async () => {
    const hub = new MemoryHub();
    const [a, b] = [A, B].map((k) => hub.join(k)) as [MemoryNetwork, MemoryNetwork];
    hub.linkAll();
    const got: number[] = [];
    b.subscribe('ctx', (m) => void got.push(m.data.byteLength));
    b.subscribe(namespaceTopic('ns'), () => undefined);
    await a.publish('ctx', new Uint8Array(100));
    await a.publish(namespaceTopic('ns'), new Uint8Array(7));
    await eventually(() => got.length === 1, 'the gossip message arrives');
    await new Promise((r) => setTimeout(r, 20));
    expect(bytesOf(a.status().payload, 'gossip', 'out')).toBe(100);
    expect(bytesOf(b.status().payload, 'gossip', 'in')).toBe(100);
    expect(bytesOf(a.status().payload, 'governance', 'out')).toBe(7);
    expect(bytesOf(b.status().payload, 'governance', 'in')).toBe(7);

    const served = new StreamRouter(b);
    async function* answer() {
      yield { deltas: 'x'.repeat(50) };
      yield { deltas: 'y'.repeat(10) };
    }
    served.register('ContextBackfillRequest', async () => answer(), { maxRequestBytes: 1024, timeoutMs: 1_000 });
    served.serve();
    const asking = new StreamRouter(a);
    const frames = [];
    for await (const f of asking.requestStream(B, 'ContextBackfillRequest', { contextId: 'c' }, { timeoutMs: 1_000, maxResponseFrameBytes: 4096 })) frames.push(f);
    expect(frames).toHaveLength(2);
    const request = encodeJson({ contextId: 'c', type: 'ContextBackfillRequest' }).byteLength;
    const answered = encodeJson({ deltas: 'x'.repeat(50) }).byteLength + encodeJson({ deltas: 'y'.repeat(10) }).byteLength;
    expect(bytesOf(a.status().payload, 'backfill', 'out')).toBe(request);
    expect(bytesOf(a.status().payload, 'backfill', 'in')).toBe(answered);
    expect(bytesOf(b.status().payload, 'backfill', 'in')).toBe(request);
    expect(bytesOf(b.status().payload, 'backfill', 'out')).toBe(answered);
    // nothing leaks into the other channels
    expect(bytesOf(a.status().payload, 'sync', 'out')).toBe(0);
    expect(bytesOf(b.status().payload, 'gossip', 'out')).toBe(0);
  });
});

describe('network status route', () => {
  it('keeps payload and topics[].mesh through the response schema', async () => {
    const { default: Fastify } = await import('fastify');
    const { registerNetworkRoutes } = await import('./routes.ts');
    const app = Fastify();
    app.addSchema({ $id: 'Error', type: 'object', additionalProperties: true });
    const payload: PayloadCount[] = [{ channel: 'gossip', direction: 'out', bytes: 1234 }];
    registerNetworkRoutes(app, {
      peerId: '12D3KooWSelf',
      status: () => ({
        peerKey: 'k',
        peerId: '12D3KooWSelf',
        listenAddresses: [],
        externalAddresses: [],
        connections: [],
        topics: [{ topic: 'ctx', peers: 19, mesh: 6 }],
        bytes: { in: 0, out: 0 },
        gossip: { in: 0, out: 0, dropped: 0 },
        requests: { in: 0, out: 0, refused: 0, byProtocol: [] },
        penalties: {},
        banned: [],
        payload,
      }),
    });
    const res = await app.inject({ method: 'GET', url: '/admin-api/network/status' });
    await app.close();
    expect(res.statusCode).toBe(200);
    expect(res.json().topics).toEqual([{ topic: 'ctx', peers: 19, mesh: 6 }]);
    expect(res.json().payload).toEqual(payload);
  });
});
