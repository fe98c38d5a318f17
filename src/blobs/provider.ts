/**
 * Serves this node's blobs to the members of a context on other nodes, over `/calimero/blob/0.0.2`
 * (peer-protocol.ts; domain.md §5.2). A request names a blob and a context; it is answered only
 * when the requesting node's key speaks for a member of the group holding that context here
 * (the injected {@link PeerMembership}). A malformed request or a non-member is refused and
 * penalized; a context this node does not know is refused without a penalty (its governance may
 * lag the requester's). The blob goes out as its stored chunks, each re-hashed from disk first.
 */
import { PeerRefusal, type Network, type PeerKey, type RequestContext } from '../network/index.ts';
import { BLOB_PROTOCOL, encodeAnswer, MAX_REQUEST_BYTES, parseRequest, SERVE_TIMEOUT_MS } from './peer-protocol.ts';
import type { BlobPeerStats, ServeOutcome } from './peer-stats.ts';
import type { BlobStore } from './store.ts';

/**
 * Whether `peer`'s node key speaks for a member of the group that holds `contextId` on this node:
 * `undefined` when this node knows no such context.
 */
export type PeerMembership = (peer: PeerKey, contextId: string) => boolean | undefined;

export interface BlobProviderDeps {
  network: Network;
  store: BlobStore;
  membership: PeerMembership;
  stats: BlobPeerStats;
  /** the provider's deadline per request (default 300 s) */
  timeoutMs?: number;
  /** the logger's debug level: why a request failed on this side (a damaged chunk, a read error) */
  onError?: (err: unknown) => void;
}

export class BlobProvider {
  constructor(private readonly d: BlobProviderDeps) {}

  /** Serves the protocol (the network may already be started). */
  start(): void {
    this.d.network.handle(BLOB_PROTOCOL, (bytes, ctx) => this.answer(bytes, ctx), {
      maxRequestBytes: MAX_REQUEST_BYTES,
      timeoutMs: this.d.timeoutMs ?? SERVE_TIMEOUT_MS,
    });
  }

  private async answer(bytes: Uint8Array, ctx: RequestContext): Promise<AsyncIterable<Uint8Array>> {
    const refuse = (outcome: ServeOutcome, message: string, penalty?: 'invalid_message' | 'unauthorized'): never => {
      this.d.stats.served[outcome]++;
      if (penalty) this.d.network.penalize(ctx.peer, penalty, `${BLOB_PROTOCOL}: ${message}`);
      throw new PeerRefusal(message);
    };
    const request = parseRequest(bytes);
    if (typeof request === 'string') return refuse('malformed', request, 'invalid_message');
    const member = this.d.membership(ctx.peer, request.contextId);
    if (member === undefined) return refuse('unknown_context', `context ${request.contextId} is not known to this node`);
    if (!member) return refuse('unauthorized', `this node's key does not speak for a member of context ${request.contextId}`, 'unauthorized');
    const meta = await this.d.store.get(request.blobId);
    if (!meta) {
      this.d.stats.served.not_found++;
      return once(encodeAnswer({ found: false }));
    }
    return this.send(encodeAnswer({ found: true, size: Number(meta.size) }), this.d.store.readChunks(meta), ctx.signal);
  }

  private async *send(header: Uint8Array, chunks: AsyncIterable<Uint8Array>, signal: AbortSignal): AsyncIterable<Uint8Array> {
    // `stopped` unless it runs to the end or fails: a requester that stops reading (a HEAD, a
    // peer that lost the sweep) ends the generator early
    let outcome: ServeOutcome = 'stopped';
    try {
      yield header;
      for await (const chunk of chunks) {
        if (signal.aborted) return;
        yield chunk;
      }
      outcome = 'sent';
    } catch (err) {
      outcome = 'failed';
      this.d.onError?.(err);
      throw err;
    } finally {
      this.d.stats.served[outcome]++;
    }
  }
}

async function* once(frame: Uint8Array): AsyncIterable<Uint8Array> {
  yield frame;
}
