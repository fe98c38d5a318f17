import { describe, expect, it } from 'vitest';
import { networkContractSuite } from './contract-suite.ts';
import type { Libp2pNetwork } from './libp2p.ts';
import { DEFAULT_BAN_POLICY } from './penalties.ts';
import { deadAddress, TestNodes } from './test-nodes.ts';

networkContractSuite(
  'Libp2pNetwork',
  () => {
    const nodes = new TestNodes();
    return {
      nodes: async (n) => Promise.all(Array.from({ length: n }, () => nodes.start())),
      stop: (net) => nodes.stop(net as Libp2pNetwork),
      deadAddress,
      teardown: () => nodes.teardown(),
      banThreshold: DEFAULT_BAN_POLICY.threshold,
    };
  },
  300,
);
