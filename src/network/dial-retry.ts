/**
 * Opening a protocol stream to a peer, with a short retry when libp2p picked a connection that was
 * closing under it (a dial-back probe's, or one the peer is closing): the exchanges of libp2p.ts
 * (domain.md §1.5) go through here. Moved out of libp2p.ts to keep that file within its bound.
 */
import './polyfill.ts';
import type { Libp2p, PeerId, Stream } from '@libp2p/interface';

/** libp2p's errors for a connection that closed under a new stream (worth another try) */
const CLOSING = /"clos(ing|ed)"|closed connection during opening/;

/**
 * `node.dialProtocol`, tried up to three more times, 100, 200, 300 ms apart, when the connection
 * it used was closing (another connection, or a new one, then serves); any other failure, or the
 * signal, ends it at once.
 */
export async function dialProtocolRetrying(node: Libp2p, id: PeerId, protocol: string, signal: AbortSignal): Promise<Stream> {
  let lastErr: unknown;
  for (let attempt = 0; ; attempt++) {
    if (attempt > 0) {
      if (signal.aborted || attempt > 3 || !CLOSING.test((lastErr as Error).message)) throw lastErr;
      await new Promise((r) => setTimeout(r, 100 * attempt));
    }
    try {
      return await node.dialProtocol(id, protocol, { signal, runOnLimitedConnection: true });
    } catch (err) {
      lastErr = err;
    }
  }
}
