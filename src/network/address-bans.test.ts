/**
 * Bans per address (address-bans.ts; issue #37 item 7): the policy with a fake clock, then a hearth
 * node on 127.0.0.1 that bans four fresh identities in turn and then refuses a fifth identity from
 * the same address before its handshake — also when the identities earned their bans as
 * non-members publishing on a topic that admits only members (the gossip admission).
 */
import './polyfill.ts';
import { afterEach, describe, expect, it } from 'vitest';
import { AddressBans } from './address-bans.ts';
import { connect, eventually } from './network-port-suite.ts';
import { TestNodes } from './test-nodes.ts';

describe('address bans, as a unit', () => {
  it('bans an address once enough distinct identities from it were banned, for a while, and counts an IPv6 /64 as one address', () => {
    let t = 0;
    const bans = new AddressBans({ threshold: 3, banMs: 100 }, () => t);
    expect(bans.noteBan('p1', ['/ip4/203.0.113.5/tcp/1'])).toEqual([]);
    expect(bans.noteBan('p1', ['/ip4/203.0.113.5/tcp/2'])).toEqual([]); // the same identity again: still one
    expect(bans.noteBan('p2', ['/ip4/203.0.113.5/tcp/3', '/ip4/198.51.100.1/tcp/3'])).toEqual([]);
    expect(bans.denies('/ip4/203.0.113.5/tcp/9')).toBe(false);
    expect(bans.noteBan('p3', ['/ip4/203.0.113.5/tcp/4'])).toEqual(['203.0.113.5']);
    expect(bans.denies('/ip4/203.0.113.5/tcp/9')).toBe(true);
    expect(bans.denies('/ip4/198.51.100.1/tcp/9')).toBe(false); // one banned identity from there
    t = 101;
    expect(bans.denies('/ip4/203.0.113.5/tcp/9')).toBe(false);
    // identities banned longer ago than banMs no longer count
    bans.noteBan('q1', ['/ip6/2001:db8:1:2::1/tcp/1']);
    bans.noteBan('q2', ['/ip6/2001:db8:1:2::2/tcp/1']);
    t = 300;
    expect(bans.noteBan('q3', ['/ip6/2001:db8:1:2::3/tcp/1'])).toEqual([]);
    bans.noteBan('q4', ['/ip6/2001:db8:1:2:ffff::4/tcp/1']);
    expect(bans.noteBan('q5', ['/ip6/2001:db8:1:2::5/tcp/1'])).toEqual(['2001:0db8:0001:0002::/64']);
    expect(bans.denies('/ip6/2001:db8:1:2:aaaa::9/tcp/1')).toBe(true);
    expect(bans.denies('/ip6/2001:db8:1:3::9/tcp/1')).toBe(false);
  });
});

describe('a hearth node banning an address', () => {
  const nodes = new TestNodes();
  afterEach(() => nodes.teardown());

  it('refuses a fresh identity from an address four banned identities came from', async () => {
    const hub = await nodes.start();
    for (let i = 0; i < 4; i++) {
      const sybil = await nodes.start();
      await connect(sybil, hub);
      await eventually(() => hub.peers().includes(sybil.self), 'the hub to hold the sybil');
      for (let p = 0; p < 20; p++) hub.penalize(sybil.self, 'invalid_message', 'garbage');
      await eventually(() => !hub.peers().includes(sybil.self), 'the banned sybil to be dropped');
      await nodes.stop(sybil);
    }
    const fresh = await nodes.start();
    await expect(fresh.dial(hub.addresses()[0]!, { timeoutMs: 3_000 })).rejects.toMatchObject({ kind: 'unreachable' });
    expect(hub.peers()).not.toContain(fresh.self);
  }, 60_000);

  it('bans the address of identities refused one after another by a topic’s admission, and refuses the next', async () => {
    const hub = await nodes.start();
    hub.subscribe('t', () => undefined, () => false); // a topic no publisher here is admitted to
    for (let i = 0; i < 4; i++) {
      const sybil = await nodes.start({ internet: { dht: false } });
      await connect(sybil, hub);
      sybil.subscribe('t', () => undefined);
      await eventually(() => sybil.topicPeers('t').includes(hub.self), 'the sybil to see the hub on the topic');
      for (let p = 0; p < 40 && hub.peers().includes(sybil.self); p++) {
        await sybil.publish('t', new TextEncoder().encode(`flood ${i}.${p}`)).catch(() => 0);
        await new Promise((r) => setTimeout(r, 20));
      }
      await eventually(() => !hub.peers().includes(sybil.self), 'the refused publisher to be banned and dropped');
      await nodes.stop(sybil);
    }
    expect(hub.status().penalties.unauthorized).toBeGreaterThanOrEqual(4 * 20);
    const fresh = await nodes.start();
    await expect(fresh.dial(hub.addresses()[0]!, { timeoutMs: 3_000 })).rejects.toMatchObject({ kind: 'unreachable' });
    expect(hub.peers()).not.toContain(fresh.self);
  }, 90_000);
});
