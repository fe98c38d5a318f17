/**
 * The gossipsub service of the libp2p network (domain.md §1.1): mesh 2/4/8, one outbound, flood
 * publish, strictly signed messages of at most 1 MiB (plus room for the RPC framing), 1 s back-offs,
 * and gossip over relayed (limited) connections too.
 */
import './polyfill.ts';
import { gossipsub } from '@libp2p/gossipsub';
import { MAX_GOSSIP_BYTES } from './contract.ts';

/** Gossip RPC frames may carry a full message plus its signature, key and topic. */
const GOSSIP_RPC_SLACK = 64 * 1024;

export function gossipService(): ReturnType<typeof gossipsub> {
  return gossipsub({
    D: 4,
    Dlo: 2,
    Dhi: 8,
    Dout: 1,
    Dscore: 2,
    floodPublish: true,
    globalSignaturePolicy: 'StrictSign',
    emitSelf: false,
    allowPublishToZeroTopicPeers: true,
    fallbackToFloodsub: false,
    maxInboundDataLength: MAX_GOSSIP_BYTES + GOSSIP_RPC_SLACK,
    pruneBackoff: 1_000,
    unsubcribeBackoff: 1_000,
    // a peer reached only through a relay still replicates (the relay bounds its data)
    runOnLimitedConnection: true,
  });
}
