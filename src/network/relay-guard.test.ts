/**
 * The relay guard (relay-guard.ts): per-peer counts and policy as a unit (a fake clock), then on a
 * hearth relay on 127.0.0.1 with bare libp2p clients — one reserves, the other opens circuits to
 * it — the data and duration limits cutting a circuit, the bytes counted, a peer opening circuits
 * in a loop penalised with `relay_abuse` until banned.
 */
import './polyfill.ts';
import { circuitRelayServer } from '@libp2p/circuit-relay-v2';
import type { Libp2p, Stream } from '@libp2p/interface';
import type { PeerKey } from './network-port.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { eventually } from './network-port-suite.ts';
import { peerKeyOf } from './peer-id.ts';
import { bareRelayClient, type RelayClient } from './relay-client-testkit.ts';
import { addressGroups, DEFAULT_RELAY_GUARD, RelayGuard, type RelayGuardPolicy } from './relay-guard.ts';
import { TestNodes } from './test-nodes.ts';

const ECHO = '/hearth-test/sink/1.0.0';
const POLICY: RelayGuardPolicy = { windowMs: 1_000, maxReservationsPerWindow: 2, maxCircuitsPerWindow: 3, maxOpenCircuits: 2, maxReservationsPerAddress: 2, maxReservationsPerSubnet: 3, reservationGraceMs: 100 };

describe('the relay guard, as a unit', () => {
  function guard() {
    let t = 0;
    const penalties: string[] = [];
    const g = new RelayGuard((peer, detail) => penalties.push(`${peer}: ${detail}`), POLICY, () => t);
    return { g, penalties, advance: (ms: number) => (t += ms) };
  }
  const fakeStream = () => {
    const target = new EventTarget();
    return Object.assign(target, { send: () => true }) as unknown as Stream & EventTarget;
  };

  it('refuses reservation requests past the window count, with one penalty each, and forgets them as the window slides', () => {
    const { g, penalties, advance } = guard();
    expect(g.denyReservation('aa')).toBe(false);
    expect(g.denyReservation('aa')).toBe(false);
    expect(g.denyReservation('aa')).toBe(true);
    expect(g.denyReservation('bb')).toBe(false); // per peer
    expect(penalties).toHaveLength(1);
    expect(penalties[0]).toMatch(/^aa: more than 2 relay reservation requests/);
    advance(1_001);
    expect(g.denyReservation('aa')).toBe(false);
    expect(g.status().reservations).toEqual({ accepted: 4, denied: 1, dropped: 0 });
  });

  it('refuses a reservation from an address or subnet already holding its share, with a penalty each; a refresh of its own passes', () => {
    const { g, penalties } = guard();
    const held: [string, string][] = [
      ['p1', '/ip4/10.0.0.1/tcp/1'],
      ['p2', '/ip4/10.0.0.1/tcp/2'],
      ['p3', '/ip4/10.0.0.9/tcp/3'],
    ];
    // 10.0.0.1 holds its 2: a third identity there is refused, p1 refreshing its own is not
    expect(g.denyReservation('p4', '/ip4/10.0.0.1/tcp/4', held)).toBe(true);
    expect(g.denyReservation('p1', '/ip4/10.0.0.1/tcp/1', held)).toBe(false);
    // 10.0.0.0/24 holds its 3: another address of the subnet is refused too, another subnet is not
    expect(g.denyReservation('p5', '/ip4/10.0.0.7/tcp/5', held)).toBe(true);
    expect(g.denyReservation('p6', '/ip4/10.0.1.7/tcp/6', held)).toBe(false);
    expect(penalties).toEqual(['p4: address 10.0.0.1 already holds 2 relay reservations', 'p5: subnet 10.0.0.0/24 already holds 3 relay reservations']);
    expect(g.status().reservations).toEqual({ accepted: 2, denied: 2, dropped: 0 });
  });

  it('groups addresses: IPv4 exact and /24, IPv6 /64 and /48, IPv4-mapped IPv6 as IPv4', () => {
    expect(addressGroups('/ip4/192.168.1.20/tcp/4001')).toEqual({ address: '192.168.1.20', subnet: '192.168.1.0/24' });
    expect(addressGroups('/ip6/2001:db8:1:2::5/tcp/1')).toEqual({ address: '2001:0db8:0001:0002::/64', subnet: '2001:0db8:0001::/48' });
    expect(addressGroups('/ip6/2001:db8:1:2:aa:bb:cc:dd/tcp/1')!.address).toBe(addressGroups('/ip6/2001:db8:1:2::9/tcp/1')!.address);
    expect(addressGroups('/ip6/::ffff:10.1.2.3/tcp/1')).toEqual({ address: '10.1.2.3', subnet: '10.1.2.0/24' });
    expect(addressGroups('/dns4/example.org/tcp/1')).toBeUndefined();
  });

  it('refuses circuits past the open count and past the window count, and classifies how circuits end', () => {
    const { g, penalties, advance } = guard();
    const a = fakeStream();
    const b = fakeStream();
    expect(g.denyCircuit('aa', a)).toBe(false);
    expect(g.denyCircuit('aa', b)).toBe(false);
    expect(g.denyCircuit('aa', fakeStream())).toBe(true); // two open at once at most
    expect(penalties.at(-1)).toMatch(/open at once/);
    expect(g.status().circuits).toEqual({ opened: 2, denied: 1, open: 2 });
    const cut = Object.assign(new Event('close'), { error: Object.assign(new Error('x'), { name: 'TransferLimitError' }) });
    a.dispatchEvent(cut);
    b.dispatchEvent(Object.assign(new Event('close'), { error: Object.assign(new Error('y'), { name: 'DurationLimitError' }) }));
    expect(g.status().ended).toEqual({ data_limit: 1, duration_limit: 1, closed: 0 });
    expect(g.status().circuits.open).toBe(0);
    // the two the relay ended at its limits do not count against the window (a redial follows)
    expect(g.denyCircuit('aa', fakeStream())).toBe(false);
    expect(g.denyCircuit('aa')).toBe(false);
    expect(g.denyCircuit('aa')).toBe(false); // third counted within the window
    expect(g.denyCircuit('aa')).toBe(true); // fourth: past the window count
    expect(penalties.at(-1)).toMatch(/more than 3 relayed circuits within/);
    advance(1_001);
    expect(g.denyCircuit('aa')).toBe(false);
  });

  it('refuses a peer that is no node key, and counts hop stream bytes both ways against the peer', () => {
    const { g } = guard();
    expect(g.denyReservation(undefined)).toBe(true);
    expect(g.denyCircuit(undefined)).toBe(true);
    const s = fakeStream();
    g.watchHop(s, 'aa');
    s.dispatchEvent(Object.assign(new Event('message'), { data: new Uint8Array(100) }));
    s.send(new Uint8Array(30) as never);
    expect(g.status().bytes).toEqual({ in: 100, out: 30 });
    expect(g.bytesOf('aa')).toBe(130);
  });
});

describe('a hearth relay guarded', () => {
  const nodes = new TestNodes();
  const clients: Libp2p[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.stop()));
    await nodes.teardown();
  });

  async function client(): Promise<RelayClient> {
    const c = await bareRelayClient();
    clients.push(c.node);
    return c;
  }

  /** a relay, a listener reserved on it (counting what its sink protocol receives), a dialer */
  async function circuit(internet: { relayDataLimitBytes?: number; relayDurationLimitSecs?: number }) {
    const relay = await nodes.start({ internet: { relayServer: true, relayDataLimitBytes: 0, relayDurationLimitSecs: 0, ...internet } });
    const listener = await client();
    await listener.listen(`${relay.addresses()[0]}/p2p-circuit`);
    const relayed = listener.node.getMultiaddrs().find((a) => a.toString().includes('/p2p-circuit'))!;
    expect(relayed).toBeDefined();
    const received = { bytes: 0, closed: undefined as string | undefined };
    await listener.node.handle(
      ECHO,
      (stream) => {
        stream.addEventListener('message', (e) => (received.bytes += e.data.byteLength));
        stream.addEventListener('close', (e) => (received.closed = e.error?.message ?? 'closed'), { once: true });
      },
      { runOnLimitedConnection: true },
    );
    const dialer = await client();
    return { relay, listener, dialer, relayed, received };
  }

  it('cuts a circuit past the data limit, counts the bytes and says why it ended', async () => {
    const { relay, dialer, relayed, received } = await circuit({ relayDataLimitBytes: 64 * 1024 });
    const stream = await dialer.node.dialProtocol(relayed, ECHO, { runOnLimitedConnection: true });
    const chunk = new Uint8Array(16 * 1024);
    for (let i = 0; i < 16 && stream.status === 'open'; i++) {
      if (!stream.send(chunk)) await stream.onDrain({ signal: AbortSignal.timeout(5_000) }).catch(() => undefined);
    }
    await eventually(() => relay.status().internet!.relayGuard!.ended.data_limit === 1, 'the relay to cut the circuit past its data limit');
    const g = relay.status().internet!.relayGuard!;
    expect(g.circuits.opened).toBe(1);
    expect(g.circuits.open).toBe(0);
    // what went through is bounded by the limit (and its last chunk): far less than the 256 KiB sent
    expect(received.bytes).toBeLessThan(128 * 1024);
    expect(g.bytes.in).toBeGreaterThan(32 * 1024);
    expect(g.bytes.in).toBeLessThan(128 * 1024);
    expect(relay.status().penalties.relay_abuse).toBeUndefined(); // reaching a limit is no abuse
  });

  it('cuts a circuit past the duration limit', async () => {
    const { relay, dialer, relayed } = await circuit({ relayDurationLimitSecs: 1 });
    const stream = await dialer.node.dialProtocol(relayed, ECHO, { runOnLimitedConnection: true });
    stream.send(new Uint8Array([1, 2, 3]));
    expect(relay.status().internet!.relayGuard!.circuits.open).toBe(1);
    await eventually(() => relay.status().internet!.relayGuard!.ended.duration_limit === 1, 'the relay to cut the circuit after a second', 5_000);
    expect(relay.status().internet!.relayGuard!.circuits.open).toBe(0);
  });

  it('fresh identities reserving and hanging up hold no slot past the grace, and one address holds at most its share (issue #37 item 5)', async () => {
    const relay = await nodes.start({ internet: { relayServer: true } });
    const share = DEFAULT_RELAY_GUARD.maxReservationsPerAddress;
    const guard = () => relay.status().internet!.relayGuard!;
    const held = () => relay.status().internet!.relayServer!.reservations;
    // share + 2 fresh identities on 127.0.0.1, each reserving, then all hanging up
    const sybils: RelayClient[] = [];
    for (let i = 0; i < share + 2; i++) {
      // paced under libp2p's own 5 inbound connections a second per address, which would refuse
      // the fast ones before the relay guard sees them (the test passed only on a slow machine)
      await new Promise((r) => setTimeout(r, 250));
      const c = await client();
      sybils.push(c);
      await Promise.race([c.listen(`${relay.addresses()[0]}/p2p-circuit`), new Promise((r) => setTimeout(r, 6_000))]).catch(() => undefined);
    }
    expect(held()).toBe(share);
    expect(guard().reservations).toMatchObject({ accepted: share, denied: 2 });
    expect(relay.status().penalties.relay_abuse).toBe(2);
    await Promise.all(sybils.map((c) => c.node.stop()));
    await eventually(() => held() === 0, 'the relay to drop the reservations of peers gone', DEFAULT_RELAY_GUARD.reservationGraceMs + 5_000);
    expect(guard().reservations.dropped).toBe(share);
    // a newcomer from the same address gets a slot again
    const honest = await client();
    await honest.listen(`${relay.addresses()[0]}/p2p-circuit`);
    expect(honest.node.getMultiaddrs().some((a) => a.toString().includes('/p2p-circuit'))).toBe(true);
    expect(held()).toBe(1);
  }, 60_000);

  it('penalises a peer that opens circuits in a loop with relay_abuse until it is banned', async () => {
    const { relay, dialer, relayed } = await circuit({});
    const dialerKey = peerKeyOf(dialer.node.peerId)!;
    // the default policy: 60 circuits a minute; the default ban: 20 penalties a minute
    for (let i = 0; i < 90 && !relay.status().banned.some((b) => b.peer === dialerKey); i++) {
      try {
        const conn = await dialer.node.dial(relayed, { signal: AbortSignal.timeout(1_000) });
        conn.abort(new Error("next"));
      } catch {
        // refused by the relay (what this test is after), or a dial the listener left waiting (about one in six on loopback: cause not looked into)
      }
    }
    const s = relay.status();
    expect(s.internet!.relayGuard!.circuits.opened).toBe(60);
    expect(s.internet!.relayGuard!.circuits.denied).toBeGreaterThanOrEqual(20);
    expect(s.penalties.relay_abuse).toBeGreaterThanOrEqual(20);
    expect(s.banned.map((b) => b.peer)).toContain(dialerKey);
    await eventually(() => dialer.node.getConnections().every((c) => c.remotePeer.toString() !== s.peerId), 'the banned dialer to be disconnected from the relay');
  }, 60_000);
});

describe('what a relay sees of a circuit', () => {
  const clients: Libp2p[] = [];
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.stop()));
  });

  /** a guard that also keeps every byte its hop streams receive, as a curious relay could */
  class TappingGuard extends RelayGuard {
    readonly seen: Uint8Array[] = [];
    override watchHop(stream: Stream, peer: PeerKey | undefined): void {
      stream.addEventListener('message', (e) => this.seen.push(e.data instanceof Uint8Array ? e.data : e.data.subarray()));
      super.watchHop(stream, peer);
    }
  }

  async function bare(services: Record<string, unknown>, listen: string[]): Promise<RelayClient> {
    const c = await bareRelayClient({ services, listen });
    clients.push(c.node);
    return c;
  }

  it('carries the two peers\' own Noise session: plaintext at both ends, only ciphertext through the relay', async () => {
    const tap = new TappingGuard(() => undefined);
    const relayServer = circuitRelayServer({ reservations: { applyDefaultLimit: false } });
    const relay = await bare({ relay: (c: object) => relayServer(tap.wrap(c) as never) }, ['/ip4/127.0.0.1/tcp/0']);
    const listener = await bare({}, []);
    await listener.listen(`${relay.node.getMultiaddrs()[0]}/p2p-circuit`);
    const relayed = listener.node.getMultiaddrs().find((a) => a.toString().includes('/p2p-circuit'))!;
    let received = '';
    await listener.node.handle(ECHO, (stream) => stream.addEventListener('message', (e) => (received += Buffer.from(e.data.subarray()).toString('latin1'))), {
      runOnLimitedConnection: true,
    });
    const dialer = await bare({}, []);
    const marker = 'a sealed delta would be sealed already; this plaintext marker is not: 0123456789';
    const stream = await dialer.node.dialProtocol(relayed, ECHO, { runOnLimitedConnection: true });
    for (let i = 0; i < 20; i++) stream.send(Buffer.from(marker, 'latin1'));
    await eventually(() => received.length >= marker.length * 20, 'the listener to receive the plaintext');
    expect(received).toContain(marker);
    const relayedBytes = Buffer.concat(tap.seen).toString('latin1');
    expect(relayedBytes.length).toBeGreaterThan(marker.length * 20); // all of it went through the relay
    // the tap does see the circuit's own bytes: the two peers negotiate their encrypter in the clear
    expect(relayedBytes).toContain('/noise');
    expect(relayedBytes).not.toContain(marker);
    expect(relayedBytes).not.toContain('0123456789');
    expect(relayedBytes).not.toContain(ECHO); // even the protocol negotiation is inside the session
  });
});
