/**
 * The size of this node's gossipsub mesh for a topic, read off the service without gossipsub's
 * own code: the network's status answers it before the libp2p stack has loaded (libp2p.ts).
 */

/** Peers in this node's mesh for `topic` (the interface libp2p exports does not name the class's `getMeshPeers`). */
export function meshSize(pubsub: unknown, topic: string): number {
  const getMeshPeers = (pubsub as { getMeshPeers?: (topic: string) => string[] } | undefined)?.getMeshPeers;
  return typeof getMeshPeers === 'function' ? getMeshPeers.call(pubsub, topic).length : 0;
}
