/**
 * Test support: libp2p networks on 127.0.0.1 with free ports and mDNS off, each with a fresh node
 * key, stopped by `teardown` (every test ends with no open handle). Not a test file itself.
 */
import { generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import pino from 'pino';
import { createLibp2pNetwork, type Libp2pNetwork, type Libp2pNetworkOptions } from './libp2p.ts';
import { libp2pPeerIdOf } from './peer-id.ts';

export const quietLogger = pino({ level: process.env.HEARTH_TEST_LOG ?? 'silent' });

export const newNodeKey = (): KeyObject => generateKeyPairSync('ed25519').privateKey;

export class TestNodes {
  private readonly started = new Set<Libp2pNetwork>();

  async start(overrides: Partial<Libp2pNetworkOptions> = {}): Promise<Libp2pNetwork> {
    const net = createLibp2pNetwork({ privateKey: newNodeKey(), host: '127.0.0.1', port: 0, mdns: false, logger: quietLogger, ...overrides });
    this.started.add(net);
    await net.start();
    return net;
  }

  async stop(net: Libp2pNetwork): Promise<void> {
    this.started.delete(net);
    await net.stop();
  }

  async teardown(): Promise<void> {
    const all = [...this.started];
    this.started.clear();
    await Promise.all(all.map((n) => n.stop()));
  }
}

/** An address where nothing listens (TCP port 1 on loopback), naming a peer nobody runs. */
export const deadAddress = (): string => `/ip4/127.0.0.1/tcp/1/p2p/${libp2pPeerIdOf(randomBytes(32).toString('hex'))}`;
