/**
 * Test support for mdns.test.ts: one hearth network node, run inside a network namespace by
 * `ip netns exec`. It listens on every interface of its namespace and prints one JSON line when it
 * is listening (`{ self, addresses }`) and one per peer it connects to (`{ connected }`); SIGTERM
 * stops it. Argument: `on` or `off` (mDNS).
 */
import { createLibp2pNetwork } from './libp2p.ts';
import { newNodeKey, quietLogger } from './test-nodes.ts';

const net = createLibp2pNetwork({ privateKey: newNodeKey(), host: '0.0.0.0', port: 0, mdns: process.argv[2] === 'on', mdnsIntervalMs: 500, logger: quietLogger });
const say = (o: object) => process.stdout.write(`${JSON.stringify(o)}\n`);
net.onPeer((e) => {
  if (e.type === 'connected') say({ connected: e.peer });
});
await net.start();
say({ self: net.self, addresses: net.addresses() });
process.on('SIGTERM', () => {
  void net.stop().then(() => process.exit(0));
});
