/**
 * Opening a protocol stream to a peer (the exchanges of libp2p.ts, domain.md §1.5): on a connection
 * already open to it when there is one, relayed ones included; with a short retry when the
 * connection picked was closing under it (a dial-back probe's, or one the peer is closing). Moved
 * out of libp2p.ts to keep that file within its bound.
 *
 * Why not simply `node.dialProtocol`: libp2p's connection manager never reuses a connection that has
 * limits (a circuit through a relay, issue #24) when asked for a peer: it dials the peer again,
 * which opens a whole new circuit through the relay (a hop, a stop, a Noise handshake), then drops
 * it as a "Duplicate multiaddr connection" and answers with the existing one. Every request to a
 * peer reached only through a relay cost the relay a circuit: the relay's guard counted them
 * against the peer's 60 circuits a minute, and the far end's libp2p refused all but 5 inbound
 * connections a second from the relay's address (`inboundConnectionThreshold`, counted per IP, and
 * all relayed connections come from the relay's), so requests failed with "All multiaddr dials
 * failed" (the relay-limit e2e test: 16 of 66 circuits a run were such duplicates; docs/network.md
 * "Relay limits and abuse"). Hearth's protocols all run on limited connections, and a direct
 * connection, when one exists, is preferred; DCUtR and the bootstrapper look for direct ones.
 */
import './polyfill.ts';
import type { Connection, Libp2p, PeerId, Stream } from '@libp2p/interface';

/** libp2p's errors for a connection that closed under a new stream (worth another try) */
const CLOSING = /"clos(ing|ed)"|closed connection during opening/;

/** The parts of a libp2p node a stream is opened through. */
export type StreamOpener = Pick<Libp2p, 'getConnections' | 'dialProtocol'>;

/** An open connection to `id`: a direct (unlimited) one first, else a relayed one; none when there is none. */
export function openConnectionTo(node: Pick<Libp2p, 'getConnections'>, id: PeerId): Connection | undefined {
  const open = node.getConnections(id).filter((c) => c.status === 'open');
  return open.find((c) => c.limits === undefined) ?? open[0];
}

/**
 * A stream of `protocol` to `id`: on an open connection to it (see the header), else through
 * `node.dialProtocol`; tried up to three more times, 100, 200, 300 ms apart, when the connection it
 * used was closing (another connection, or a new one, then serves); any other failure, or the
 * signal, ends it at once.
 */
export async function dialProtocolRetrying(node: StreamOpener, id: PeerId, protocol: string, signal: AbortSignal): Promise<Stream> {
  let lastErr: unknown;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      if (signal.aborted || attempt > 3 || !CLOSING.test((lastErr as Error).message)) throw lastErr;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
    try {
      const conn = openConnectionTo(node, id);
      if (conn) return await conn.newStream(protocol, { signal, runOnLimitedConnection: true });
      return await node.dialProtocol(id, protocol, { signal, runOnLimitedConnection: true });
    } catch (err) {
      lastErr = err;
    }
  }
}
