import { describe, expect, it } from 'vitest';
import { Metrics } from '../http/metrics.ts';
import { PeerRefusal } from './contract.ts';
import { MemoryHub } from './memory.ts';
import { registerNetworkMetrics } from './metrics.ts';

const A = 'a'.repeat(64);
const B = 'b'.repeat(64);

describe('network metrics', () => {
  it('exposes peers, gossip, bytes, exchanges and penalties with closed label sets', async () => {
    const hub = new MemoryHub();
    const a = hub.join(A);
    const b = hub.join(B);
    hub.link(A, B);
    const metrics = new Metrics();
    registerNetworkMetrics(metrics, b);
    b.handle('/p', async () => {
      throw new PeerRefusal('no');
    }, { maxRequestBytes: 16, timeoutMs: 1_000 });
    b.subscribe('t', () => {
      throw new Error('handler bug');
    });
    await a.publish('t', new Uint8Array(3));
    await a.request(B, '/p', new Uint8Array(1), { timeoutMs: 1_000, maxResponseFrameBytes: 16 }).catch(() => undefined);
    await b.request(A, '/unknown', new Uint8Array(1), { timeoutMs: 1_000, maxResponseFrameBytes: 16 }).catch(() => undefined);
    b.penalize(A, 'bad_signature', 'detail that must not become a label');
    await new Promise((r) => setTimeout(r, 10));
    const text = await metrics.render();
    expect(text).toContain('# TYPE hearth_network_peers gauge\nhearth_network_peers 1');
    expect(text).toContain('# TYPE hearth_network_gossip_messages_total counter');
    expect(text).toContain('hearth_network_gossip_messages_total{direction="in",outcome="received"} 1');
    expect(text).toContain('hearth_network_gossip_messages_total{direction="in",outcome="dropped"} 1');
    expect(text).toContain('hearth_network_bytes_total{direction="in"} 4');
    expect(text).toContain('hearth_network_requests_total{direction="in",outcome="refused",protocol="/p"} 1');
    expect(text).toContain('hearth_network_requests_total{direction="out",outcome="unsupported",protocol="other"} 1');
    expect(text).toContain('hearth_network_penalties_total{reason="bad_signature"} 1');
    expect(text).toContain('hearth_network_penalties_total{reason="replay"} 0');
    expect(text).not.toContain('detail');
    expect(text).not.toContain('/unknown');
  });
});
