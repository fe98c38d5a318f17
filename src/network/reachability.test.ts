/**
 * The dial-back probe (reachability.ts): real libp2p nodes on 127.0.0.1 dial each other back and
 * say `public`; a fake host drives the verdict and the serving side's refusals (malformed request,
 * one probe per peer per 30 s, a peer reached only through a relay, a busy responder).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { connect, eventually } from './network-port-suite.ts';
import { PeerRefusal, type PeerKey, type RequestHandler } from './network-port.ts';
import { DIALBACK_PROTOCOL, ReachabilityProbe, type ReachabilityHost } from './reachability.ts';
import { TestNodes } from './test-nodes.ts';

const enc = (v: unknown) => new TextEncoder().encode(typeof v === 'string' ? v : JSON.stringify(v));
const dec = (b: Uint8Array) => JSON.parse(new TextDecoder().decode(b));

describe('the dial-back probe between real nodes on 127.0.0.1', () => {
  const nodes = new TestNodes();
  afterAll(() => nodes.teardown());

  it('each of three connected nodes is dialed back by its peers and reports public', async () => {
    const [a, b, c] = [await nodes.start(), await nodes.start(), await nodes.start()];
    expect(a.status().internet!.autonat.reachability).toBe('unknown');
    await connect(a, b);
    await connect(a, c);
    for (const n of [a, b, c]) await eventually(() => n.status().internet!.autonat.reachability === 'public', 'a public verdict', 20_000);
    const s = b.status().internet!.autonat;
    expect(s).toMatchObject({ lastTestResult: 'reachable', lastTestReason: null });
    expect(s.lastTestObservedAddr).toMatch(/^\/ip4\/127\.0\.0\.1\/tcp\/\d+$/);
    expect(s.lastTestAt).toBeGreaterThan(Date.now() - 60_000);
    // the probe's exchanges are counted as hearth's own protocol, on both sides
    expect(b.status().requests.byProtocol).toContainEqual(expect.objectContaining({ protocol: DIALBACK_PROTOCOL, direction: 'out', outcome: 'ok' }));
    expect(a.status().requests.byProtocol).toContainEqual(expect.objectContaining({ protocol: DIALBACK_PROTOCOL, direction: 'in' }));
  });

  it('a node with autonat off never asks (stays unknown) but still dials its peers back, unpenalized', async () => {
    const quiet = await nodes.start({ internet: { autonat: false } });
    const other = await nodes.start();
    await connect(other, quiet);
    await eventually(() => other.status().internet!.autonat.reachability === 'public', 'the other node to be dialed back', 20_000);
    expect(quiet.status().internet!.autonat).toMatchObject({ reachability: 'unknown', lastTestResult: null });
    expect(quiet.status().penalties).toEqual({});
  });
});

/** A host whose peers answer as the test says; records what it was asked to dial. */
function fakeHost(opts: { answers?: Map<PeerKey, unknown>; direct?: (p: PeerKey) => boolean; dialBack?: (a: string) => Promise<PeerKey> } = {}) {
  let now = 1_000_000;
  let handler: RequestHandler | undefined;
  const dialed: string[] = [];
  const verdicts: string[] = [];
  const host: ReachabilityHost = {
    request: async (peer) => {
      const a = opts.answers?.get(peer);
      if (a === undefined) throw new Error('protocol not supported');
      return enc(a);
    },
    handle: (_p, h) => void (handler = h),
    directRemote: (p) => ((opts.direct ?? (() => true))(p) ? { ip: '203.0.113.7', family: 4 } : undefined),
    dialBack: async (address) => {
      dialed.push(address);
      return opts.dialBack ? opts.dialBack(address) : 'requester';
    },
    peerIdOf: (p) => `id-${p}`,
    listenPorts: () => [4001],
    now: () => now,
    verdict: (v) => void verdicts.push(v),
  };
  const probe = new ReachabilityProbe(host);
  probe.start();
  const serve = (peer: PeerKey, body: Uint8Array | unknown) =>
    handler!(body instanceof Uint8Array ? body : enc(body), { peer, protocol: DIALBACK_PROTOCOL, signal: new AbortController().signal }).then((r) => dec(r as Uint8Array));
  return { probe, host, dialed, verdicts, serve, tick: (ms: number) => (now += ms) };
}

describe('the probe verdict', () => {
  it('is unknown before any answer, then follows the majority of the last three peers', async () => {
    const answers = new Map<PeerKey, unknown>([
      ['p1', { observed: '/ip4/203.0.113.7/tcp/4001', ok: false, reason: 'connection refused' }],
      ['p2', { observed: '/ip4/203.0.113.7/tcp/4001', ok: false }],
      ['p3', { observed: '/ip4/203.0.113.7/tcp/4001', ok: true }],
      ['p4', { observed: '/ip4/203.0.113.7/tcp/4001', ok: true }],
    ]);
    const { probe, verdicts } = fakeHost({ answers });
    expect(probe.status()).toMatchObject({ reachability: 'unknown', lastTestResult: null, lastTestAt: null });
    await probe.ask('p1');
    expect(probe.status()).toMatchObject({ reachability: 'private', lastTestResult: 'unreachable', lastTestReason: 'connection refused', lastTestObservedAddr: '/ip4/203.0.113.7/tcp/4001' });
    await probe.ask('p2');
    await probe.ask('p3');
    expect(probe.status().reachability).toBe('private'); // two of three said no
    await probe.ask('p4');
    expect(probe.status().reachability).toBe('public'); // p1 fell out: two of the last three said yes
    expect(verdicts).toEqual(['private', 'private', 'private', 'public']);
  });

  it('counts one vote per peer (its newest), and breaks a tie by the newest answer', async () => {
    const answers = new Map<PeerKey, unknown>([['p1', { observed: '/ip4/203.0.113.7/tcp/4001', ok: false }]]);
    const { probe } = fakeHost({ answers });
    await probe.ask('p1');
    await probe.ask('p1');
    answers.set('p2', { observed: '/ip4/203.0.113.7/tcp/4001', ok: true });
    await probe.ask('p2');
    expect(probe.status().reachability).toBe('public'); // one each: the newest said yes
    answers.set('p1', { observed: '/ip4/203.0.113.7/tcp/4001', ok: true });
    await probe.ask('p1');
    expect(probe.status().reachability).toBe('public');
  });

  it('takes no vote from a peer that does not serve the probe or answers garbage', async () => {
    const answers = new Map<PeerKey, unknown>([
      ['garbage', 'not json'],
      ['wrong', { observed: 7, ok: 'yes' }],
    ]);
    const { probe } = fakeHost({ answers });
    await probe.ask('absent');
    expect(probe.status()).toMatchObject({ reachability: 'unknown', lastTestResult: 'error', lastTestReason: 'protocol not supported' });
    await probe.ask('garbage');
    await probe.ask('wrong');
    expect(probe.status()).toMatchObject({ reachability: 'unknown', lastTestResult: 'error', lastTestReason: 'malformed dial-back answer' });
  });

  it('asks a newly connected peer only over a direct connection, and not again within the recheck time', async () => {
    const asked: PeerKey[] = [];
    const { probe, host } = fakeHost({ direct: (p) => p !== 'relayed' });
    host.request = async (peer) => {
      asked.push(peer);
      return enc({ observed: '/ip4/203.0.113.7/tcp/4001', ok: true });
    };
    probe.onConnected('relayed');
    probe.onConnected('p1');
    await new Promise((r) => setTimeout(r, 10));
    probe.onConnected('p1');
    await new Promise((r) => setTimeout(r, 10));
    expect(asked).toEqual(['p1']);
  });
});

describe('serving the probe', () => {
  it('dials the requester back at its own IP on each port asked, never another host', async () => {
    const { serve, dialed } = fakeHost();
    expect(await serve('requester', { ports: [4001, 4002] })).toEqual({ observed: '/ip4/203.0.113.7/tcp/4001', ok: true });
    expect(dialed).toEqual(['/ip4/203.0.113.7/tcp/4001/p2p/id-requester']); // the first port answered
  });

  it('answers not reached, with the reason, when no dial reaches the requester', async () => {
    const { serve, dialed } = fakeHost({
      dialBack: async (a) => {
        if (a.includes('4001')) throw new Error('connect ECONNREFUSED');
        return 'someone-else';
      },
    });
    expect(await serve('requester', { ports: [4001, 4002] })).toEqual({ observed: '/ip4/203.0.113.7/tcp/4001', ok: false, reason: 'another peer answered at that address' });
    expect(dialed).toHaveLength(2);
  });

  it.each([
    ['not JSON', enc('{{{')],
    ['not UTF-8', new Uint8Array([0xff, 0xfe, 0xfd])],
    ['no ports', { ports: [] }],
    ['too many ports', { ports: [1, 2, 3, 4, 5] }],
    ['a port out of range', { ports: [70_000] }],
    ['a port that is not an integer', { ports: [80.5] }],
    ['a port as a string', { ports: ['80'] }],
    ['no ports key', { port: 80 }],
  ])('refuses a malformed request: %s', async (_what, body) => {
    const { serve, dialed } = fakeHost();
    await expect(serve('requester', body)).rejects.toThrow(new PeerRefusal('malformed dial-back request'));
    expect(dialed).toEqual([]);
  });

  it('serves one probe per peer per 30 s', async () => {
    const { serve, dialed, tick } = fakeHost();
    await serve('requester', { ports: [4001] });
    await expect(serve('requester', { ports: [4001] })).rejects.toThrow('one dial-back per 30 s');
    tick(29_000);
    await expect(serve('requester', { ports: [4001] })).rejects.toThrow('one dial-back per 30 s');
    tick(2_000);
    expect((await serve('requester', { ports: [4001] })).ok).toBe(true);
    expect(dialed).toHaveLength(2);
  });

  it('refuses a peer reached only through a relay: there is no address to dial back', async () => {
    const { serve, dialed } = fakeHost({ direct: () => false });
    await expect(serve('requester', { ports: [4001] })).rejects.toThrow('reached only through a relay');
    expect(dialed).toEqual([]);
  });

  it('serves four probes at once and refuses a fifth as busy', async () => {
    const release: (() => void)[] = [];
    const { serve } = fakeHost({ dialBack: (a) => new Promise((r) => release.push(() => r(`requester${a.split('id-requester')[1]}`))) });
    const running = [1, 2, 3, 4].map((i) => serve(`requester${i}`, { ports: [4001] }));
    await new Promise((r) => setTimeout(r, 10));
    await expect(serve('requester5', { ports: [4001] })).rejects.toThrow('busy');
    for (const r of release) r();
    for (const answer of await Promise.all(running)) expect(answer.ok).toBe(true);
  });
});
