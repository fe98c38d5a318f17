import { describe, expect, it } from 'vitest';
import { networkPortSuite } from './network-port-suite.ts';
import type { Libp2pNetwork } from './libp2p.ts';
import { DEFAULT_BAN_POLICY } from './penalties.ts';
import { deadAddress, TestNodes } from './test-nodes.ts';

networkPortSuite(
  'Libp2pNetwork',
  () => {
    const nodes = new TestNodes();
    return {
      // without the DHT, nodes meet only by dial (nothing else dials a peer it learnt of)
      nodes: async (n, o) => Promise.all(Array.from({ length: n }, () => nodes.start(o?.connectedOnlyByDial ? { internet: { dht: false } } : {}))),
      stop: (net) => nodes.stop(net as Libp2pNetwork),
      deadAddress,
      teardown: () => nodes.teardown(),
      banThreshold: DEFAULT_BAN_POLICY.threshold,
    };
  },
  300,
);
