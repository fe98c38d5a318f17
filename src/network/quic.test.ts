/**
 * QUIC address handling (issue #32 §3, network/quic.ts): which addresses are QUIC, the refusal of a
 * QUIC address where Node.js cannot run it, and the dial order that puts QUIC before TCP.
 */
import './polyfill.ts';
import type { Address, Connection, Transport } from '@libp2p/interface';
import { multiaddr } from '@multiformats/multiaddr';
import pino from 'pino';
import { describe, expect, it, vi } from 'vitest';
import { abortableDials, checkPeerAddress, checkPeerAddresses, dialableHere, isQuicAddress, loadQuicTransport, quicFirstAddresses, quicFirstSorter, quicListenAddress, quicPortOf, quicSupported } from './quic.ts';

const ID = '12D3KooWShNVPbjfqyhSM2E9dJKVdT5tCLvdKajRVUapAXrVGNph';
const TCP = `/ip4/127.0.0.1/tcp/2428/p2p/${ID}`;
const QUIC = `/ip4/127.0.0.1/udp/2428/quic-v1/p2p/${ID}`;

describe('QUIC addresses', () => {
  it('tells QUIC from TCP, the draft-29 form included', () => {
    expect(isQuicAddress(QUIC)).toBe(true);
    expect(isQuicAddress(`/ip6/::1/udp/9/quic`)).toBe(true);
    expect(isQuicAddress(TCP)).toBe(false);
    expect(isQuicAddress(`/dns4/quic-v1.example/tcp/1`)).toBe(false); // a host named so is no QUIC
  });

  it('accepts a quic-v1 address on Node.js 22+ and TCP anywhere', () => {
    for (const v of ['22.0.0', '24.1.0', '26.10.0']) expect(() => checkPeerAddress(QUIC, v)).not.toThrow();
    expect(() => checkPeerAddresses([TCP, `/ip6/::1/tcp/1/p2p/${ID}`], '20.19.0')).not.toThrow();
  });

  it('refuses a QUIC address on Node.js 20 with one line naming the requirement', () => {
    expect(() => checkPeerAddresses([TCP, QUIC], '20.19.0')).toThrow(/^\/ip4\/127\.0\.0\.1\/udp\/2428\/quic-v1\/p2p\/\S+ is a QUIC address: QUIC needs Node\.js 22 or later, this is Node\.js 20\.19\.0/);
    try {
      checkPeerAddress(QUIC, '20.20.2');
    } catch (err) {
      expect((err as Error).message).not.toContain('\n');
    }
  });

  it('refuses draft-29 QUIC, quic-v1 not over UDP, and what is no multiaddr', () => {
    expect(() => checkPeerAddress(`/ip4/127.0.0.1/udp/1/quic/p2p/${ID}`, '26.0.0')).toThrow(/draft-29 \(\/quic\) is not supported; use \/udp\/<port>\/quic-v1/);
    expect(() => checkPeerAddress(`/ip4/127.0.0.1/tcp/1/quic-v1`, '26.0.0')).toThrow(/a QUIC address is \/ip4\|ip6\|dns…\/udp\/<port>\/quic-v1/);
    expect(() => checkPeerAddress('udp://127.0.0.1:2428', '26.0.0')).toThrow(/^not a multiaddr: "udp:\/\/127\.0\.0\.1:2428"$/);
  });

  it('leaves out remembered QUIC addresses on Node.js 20, not TCP ones', () => {
    expect(dialableHere(QUIC, '20.20.2')).toBe(false);
    expect(dialableHere(QUIC, '22.0.0')).toBe(true);
    expect(dialableHere(TCP, '20.20.2')).toBe(true);
    expect(dialableHere('garbage', '26.0.0')).toBe(false);
  });

  it('knows which Node.js runs QUIC', () => {
    expect(quicSupported('20.20.2')).toBe(false);
    expect(quicSupported('21.7.3')).toBe(false);
    expect(quicSupported('22.0.0')).toBe(true);
    expect(quicSupported('26.10.0')).toBe(true);
  });

  it('listens on the UDP port of the TCP port’s number, on the same host', () => {
    expect(quicListenAddress(multiaddr('/ip4/0.0.0.0/tcp/0'), 40123).toString()).toBe('/ip4/0.0.0.0/udp/40123/quic-v1');
    expect(quicListenAddress(multiaddr('/ip6/::/tcp/2428'), 2428).toString()).toBe('/ip6/::/udp/2428/quic-v1');
    expect(quicPortOf([multiaddr('/ip4/127.0.0.1/tcp/5'), multiaddr('/ip4/127.0.0.1/udp/7/quic-v1')])).toBe(7);
    expect(quicPortOf([multiaddr(`/ip4/1.2.3.4/udp/9/quic-v1/p2p/${ID}/p2p-circuit`), multiaddr('/ip4/127.0.0.1/tcp/5')])).toBeUndefined();
  });
});

describe('the dial order', () => {
  const at = (s: string, isCertified = false): Address => ({ multiaddr: multiaddr(s), isCertified });
  const order = (xs: Address[]) => [...xs].sort(quicFirstSorter).map((a) => a.multiaddr.toString());

  it('puts QUIC before TCP for a peer that offers both', () => {
    expect(order([at('/ip4/11.0.0.1/tcp/1'), at('/ip4/11.0.0.1/udp/1/quic-v1')])).toEqual(['/ip4/11.0.0.1/udp/1/quic-v1', '/ip4/11.0.0.1/tcp/1']);
    expect(order([at('/ip4/127.0.0.1/tcp/1'), at('/ip4/127.0.0.1/udp/1/quic-v1')])).toEqual(['/ip4/127.0.0.1/udp/1/quic-v1', '/ip4/127.0.0.1/tcp/1']);
  });

  it('lists a node’s own addresses QUIC first, each kind in its order', () => {
    const own = ['/ip4/127.0.0.1/tcp/5', '/ip4/10.0.0.2/tcp/5', '/ip4/127.0.0.1/udp/5/quic-v1', '/ip4/10.0.0.2/udp/5/quic-v1'].map((a) => multiaddr(a));
    expect(quicFirstAddresses(own).map(String)).toEqual(['/ip4/127.0.0.1/udp/5/quic-v1', '/ip4/10.0.0.2/udp/5/quic-v1', '/ip4/127.0.0.1/tcp/5', '/ip4/10.0.0.2/tcp/5']);
  });

  it('keeps libp2p’s order before that: public first, then direct before relayed, loopback last', () => {
    const sorted = order([
      at(`/ip4/11.0.0.9/tcp/1/p2p/${ID}/p2p-circuit`),
      at('/ip4/127.0.0.1/udp/1/quic-v1'),
      at('/ip4/10.0.0.1/udp/1/quic-v1'),
      at('/ip4/11.0.0.1/tcp/1'),
      at('/ip4/11.0.0.1/udp/1/quic-v1'),
    ]);
    expect(sorted).toEqual([
      '/ip4/11.0.0.1/udp/1/quic-v1',
      '/ip4/11.0.0.1/tcp/1',
      `/ip4/11.0.0.9/tcp/1/p2p/${ID}/p2p-circuit`, // a relay's public address ranks with the public ones (libp2p's order)
      '/ip4/10.0.0.1/udp/1/quic-v1',
      '/ip4/127.0.0.1/udp/1/quic-v1',
    ]);
  });
});

describe('loading the transport', () => {
  it('on Node.js 20 logs once that QUIC needs 22 and gives no transport', async () => {
    const lines: string[] = [];
    const log = pino({ level: 'info' }, { write: (s: string) => void lines.push(s) });
    expect(await loadQuicTransport(log, '20.20.2')).toBeUndefined();
    expect(await loadQuicTransport(log, '20.20.2')).toBeUndefined();
    const told = lines.filter((l) => l.includes('QUIC needs Node.js 22 or later'));
    expect(told).toHaveLength(1); // once per process (vitest gives each test file its own modules)
    expect(lines.join('')).not.toMatch(/could not load/);
  });
});

describe('QUIC dials end at their signal (abortableDials)', () => {
  // a transport whose dial, as libp2p-quic's handshake, runs to its own end whatever the signal says
  const slow = () => {
    let finish!: (c: Connection) => void;
    const made = new Promise<Connection>((r) => (finish = r));
    const transport = { dial: () => made } as unknown as Transport;
    return { transport, finish };
  };
  const conn = () => ({ abort: vi.fn() }) as unknown as Connection & { abort: ReturnType<typeof vi.fn> };

  it('rejects when the signal aborts, and drops a connection the handshake still makes', async () => {
    const { transport, finish } = slow();
    const t = abortableDials(() => transport)({} as never);
    const ac = new AbortController();
    const dialing = t.dial(multiaddr(QUIC), { signal: ac.signal } as never);
    ac.abort(new Error('address timeout'));
    await expect(dialing).rejects.toThrow('address timeout');
    const late = conn();
    finish(late);
    await new Promise((r) => setTimeout(r, 0));
    expect(late.abort).toHaveBeenCalledOnce();
  });

  it('answers the connection when it comes first, and an aborted signal refuses at once', async () => {
    const { transport, finish } = slow();
    const t = abortableDials(() => transport)({} as never);
    const ac = new AbortController();
    const dialing = t.dial(multiaddr(QUIC), { signal: ac.signal } as never);
    const made = conn();
    finish(made);
    expect(await dialing).toBe(made);
    ac.abort();
    expect(made.abort).not.toHaveBeenCalled();
    await expect(t.dial(multiaddr(QUIC), { signal: ac.signal } as never)).rejects.toThrow();
  });
});
