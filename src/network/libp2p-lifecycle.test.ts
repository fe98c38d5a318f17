/**
 * The libp2p network's life: its identity across restarts, bootstrap redial, what it does before
 * start, and that stop() leaves no socket or redial timer behind.
 */
import { createPrivateKey } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { connect } from 'node:net';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { publicKeyOf } from '../crypto/keys.ts';
import { eventually } from './network-port-suite.ts';
import { createLibp2pNetwork, type Libp2pNetwork } from './libp2p.ts';
import { libp2pPeerIdOf } from './peer-id.ts';
import { deadAddress, newNodeKey, quietLogger, TestNodes } from './test-nodes.ts';

const nodes = new TestNodes();
afterEach(() => nodes.teardown());

const fastRedial = { initialMs: 100, maxMs: 400, dialTimeoutMs: 2_000, stableMs: 10_000 };

/** Whether a TCP connection to the loopback port is refused (nothing listens there). */
const refused = (port: number) =>
  new Promise<boolean>((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });

// first in the file, so that no earlier test's sockets are still closing when it counts
describe('Libp2pNetwork stop', () => {
  it('leaves no socket behind when stopped, redial loops to dead peers included', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((r) => /^(TCP|UDP|Pipe)/.test(r)).length;
    const before = sockets();
    const a = await nodes.start({ bootstrap: [deadAddress()], redial: { ...fastRedial, maxMs: 60_000 } });
    const b = await nodes.start();
    const ports = [a, b].map((n) => Number(/\/tcp\/(\d+)$/.exec(n.status().listenAddresses[0]!)![1]));
    await a.dial(b.addresses()[0]!, { timeoutMs: 5_000 });
    await eventually(() => b.peers().includes(a.self), 'the connection');
    expect(sockets()).toBeGreaterThan(before);
    const stopping = Date.now();
    await nodes.teardown();
    expect(Date.now() - stopping).toBeLessThan(5_000); // no wait on a redial backoff
    await eventually(() => sockets() <= before, 'every socket to close', 5_000);
    for (const port of ports) expect(await refused(port)).toBe(true);
  });
});

describe('Libp2pNetwork identity', () => {
  it('keeps the same peer id across restarts from the same node key file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'hearth-net-'));
    try {
      const file = join(dir, 'node-key.pem');
      await writeFile(file, newNodeKey().export({ type: 'pkcs8', format: 'pem' }));
      const load = async () => createPrivateKey(await readFile(file));
      const first = await nodes.start({ privateKey: await load() });
      const id = first.status().peerId;
      expect(first.addresses().every((a) => a.endsWith(`/p2p/${id}`))).toBe(true);
      await nodes.stop(first);
      const second = await nodes.start({ privateKey: await load() });
      expect(second.status().peerId).toBe(id);
      expect(second.self).toBe(first.self);
      expect(second.self).toBe(publicKeyOf(await load()));
      expect(id).toBe(libp2pPeerIdOf(second.self));
      expect(id).toMatch(/^12D3KooW/);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('Libp2pNetwork bootstrap', () => {
  it('dials its bootstrap peers at start and redials one that restarted', async () => {
    const key = newNodeKey();
    const b = await nodes.start({ privateKey: key });
    const address = b.addresses()[0]!;
    const port = Number(/\/tcp\/(\d+)\//.exec(address)![1]);
    const a = await nodes.start({ bootstrap: [address], redial: fastRedial });
    await eventually(() => a.peers().includes(b.self), 'a to reach its bootstrap peer');
    await nodes.stop(b);
    await eventually(() => !a.peers().includes(b.self), 'a to see b go');
    await new Promise((r) => setTimeout(r, 500)); // a few redials fail meanwhile
    const again = await nodes.start({ privateKey: key, port });
    await eventually(() => a.peers().includes(again.self), 'a to redial the restarted peer');
    expect(a.status().connections.find((c) => c.peer === again.self)?.direction).toBe('outbound');
  });

  it('refuses a bootstrap address that is not a multiaddr when built', () => {
    expect(() => createLibp2pNetwork({ privateKey: newNodeKey(), host: '127.0.0.1', port: 0, bootstrap: ['example.org:2428'], logger: quietLogger })).toThrow(/not a multiaddr/);
  });
});

describe('Libp2pNetwork lifecycle', () => {
  it('refuses a host that is not an IP address, a bad port and a key that is not Ed25519', async () => {
    const base = { privateKey: newNodeKey(), host: '127.0.0.1', port: 0, logger: quietLogger };
    expect(() => createLibp2pNetwork({ ...base, host: 'localhost' })).toThrow(/IP address/);
    expect(() => createLibp2pNetwork({ ...base, port: 70_000 })).toThrow(/port/);
    const { generateKeyPairSync } = await import('node:crypto');
    expect(() => createLibp2pNetwork({ ...base, privateKey: generateKeyPairSync('x25519').privateKey })).toThrow(/Ed25519/);
  });

  it('fails to start with the address it could not listen on', async () => {
    const taken = await nodes.start();
    const port = Number(/\/tcp\/(\d+)\//.exec(taken.addresses()[0]!)![1]);
    const net = createLibp2pNetwork({ privateKey: newNodeKey(), host: '127.0.0.1', port, logger: quietLogger });
    await expect(net.start()).rejects.toThrow(`network: could not listen on /ip4/127.0.0.1/tcp/${port}`);
    expect(net.addresses()).toEqual([]);
  });

  it('answers as an unconnected node before start and after stop, and starts only once', async () => {
    const net = createLibp2pNetwork({ privateKey: newNodeKey(), host: '127.0.0.1', port: 0, logger: quietLogger });
    const idle = async (n: Libp2pNetwork) => {
      expect(n.peers()).toEqual([]);
      expect(n.addresses()).toEqual([]);
      expect(await n.publish('t', new Uint8Array(1))).toBe(0);
      await expect(n.request(n.self, '/x', new Uint8Array(0), { timeoutMs: 100, maxResponseFrameBytes: 1 })).rejects.toMatchObject({ kind: 'unreachable' });
      await expect(n.dial(deadAddress(), { timeoutMs: 100 })).rejects.toMatchObject({ kind: 'unreachable' });
    };
    await idle(net);
    await net.start();
    await expect(net.start()).rejects.toThrow(/started/);
    await net.stop();
    await idle(net);
    expect(net.status()).toMatchObject({ connections: [], listenAddresses: [], externalAddresses: [] });
  });

});
