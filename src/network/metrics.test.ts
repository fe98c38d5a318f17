import { describe, expect, it } from 'vitest';
import { Metrics } from '../http/metrics.ts';
import { PeerRefusal } from './network-port.ts';
import { MemoryHub } from './memory.ts';
import { networkSeries, registerNetworkMetrics } from './metrics.ts';
import { RelayGuard } from './relay-guard.ts';

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

  it('adds the relay guard\'s series on a relay only', async () => {
    const hub = new MemoryHub();
    const plain = new Metrics();
    registerNetworkMetrics(plain, hub.join(A));
    expect(await plain.render()).not.toMatch(/^hearth_relay_/m); // declared (HELP, TYPE), no samples
    const guard = new RelayGuard(() => undefined);
    guard.denyReservation(A);
    guard.denyCircuit(B);
    const base = hub.join(B).status();
    const relay = new Metrics();
    for (const source of networkSeries(() => ({ ...base, internet: { relays: [], directUpgrades: [], upgradeCounts: { attempts: 0, successes: 0 }, autonat: { reachability: 'public', lastTestAddr: null, lastTestResult: null, lastTestReason: null, lastTestObservedAddr: null, lastTestAt: null }, relayGuard: guard.status() } }))) relay.addGauge(source);
    const text = await relay.render();
    expect(text).toContain('hearth_relay_reservations_total{outcome="accepted"} 1');
    expect(text).toContain('hearth_relay_circuits_total{outcome="opened"} 1');
    expect(text).toContain('hearth_relay_circuits_total{outcome="data_limit"} 0');
    expect(text).toContain('# TYPE hearth_relay_circuits_open gauge\nhearth_relay_circuits_open 0');
    expect(text).toContain('hearth_relay_bytes_total{direction="in"} 0');
  });
});
