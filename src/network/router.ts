/**
 * The sync stream (domain.md §1.5): one stream protocol, `/calimero/stream/0.0.2`, carries every
 * request kind nodes exchange (namespace backfill and join, later context heads, deltas and
 * snapshots). Domains register request kinds here instead of protocols; the router serves the
 * protocol once and dispatches on the request's `type`.
 *
 * Encoding is hearth's own (docs/decisions.md): each frame is one UTF-8 JSON object — the request
 * `{"type": <kind>, ...fields}`, each response frame whatever the handler returns — where the
 * reference sends borsh `StreamMessage`s. A malformed request, an unknown kind or an oversized one
 * is refused and reported to the network as the peer's fault (penalize).
 */
import { PeerNetworkError, PeerRefusal, type Network, type PeerKey, type RequestContext, type RequestOptions } from './network-port.ts';
import { channelOfKind, type PayloadDirection } from './payload.ts';

export const SYNC_PROTOCOL = '/calimero/stream/0.0.2';

export type JsonObject = Record<string, unknown>;

export interface KindOptions {
  /** a larger request of this kind is refused (the protocol-wide bound is the largest of these) */
  maxRequestBytes: number;
  /** the handler's deadline */
  timeoutMs: number;
}

export interface KindContext extends RequestContext {
  kind: string;
}

/** Answers one request with one JSON value, or with a sequence of them (a stream of frames). */
export type KindHandler = (request: JsonObject, ctx: KindContext) => Promise<unknown | AsyncIterable<unknown>>;

const enc = new TextEncoder();
const dec = new TextDecoder('utf-8', { fatal: true });

export const encodeJson = (value: unknown): Uint8Array => enc.encode(JSON.stringify(value));

/** Decodes one frame as a JSON object; undefined when it is not one. */
/**
 * Splits `items` into runs whose sizes (JSON length by default) add up to at most `budget`, so a
 * long answer streams as frames within the frame bound; an item larger than the budget is a run of
 * its own.
 */
export function* batches<T>(items: Iterable<T>, budget: number, size: (item: T) => number = (item) => JSON.stringify(item).length): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const n = size(item);
    if (batch.length > 0 && bytes + n > budget) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += n;
  }
  if (batch.length > 0) yield batch;
}

export function decodeJson(bytes: Uint8Array): JsonObject | undefined {
  try {
    const v: unknown = JSON.parse(dec.decode(bytes));
    return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

const isIterable = (v: unknown): v is AsyncIterable<unknown> => v !== null && typeof v === 'object' && Symbol.asyncIterator in v;

async function* encodeAll(values: AsyncIterable<unknown>): AsyncIterable<Uint8Array> {
  for await (const v of values) yield encodeJson(v);
}

export class StreamRouter {
  private readonly kinds = new Map<string, { handler: KindHandler; opts: KindOptions }>();
  private served = false;

  constructor(private readonly network: Network) {}

  /** Registers a request kind; call before `serve`. */
  register(kind: string, handler: KindHandler, opts: KindOptions): void {
    if (this.served) throw new Error(`request kind ${kind} registered after the router started serving`);
    if (this.kinds.has(kind)) throw new Error(`request kind registered twice: ${kind}`);
    this.kinds.set(kind, { handler, opts });
  }

  /** Serves the sync protocol with every kind registered so far. */
  serve(): void {
    if (this.served) return;
    this.served = true;
    const all = [...this.kinds.values()].map((k) => k.opts);
    this.network.handle(SYNC_PROTOCOL, (bytes, ctx) => this.dispatch(bytes, ctx), {
      maxRequestBytes: Math.max(1024, ...all.map((o) => o.maxRequestBytes)),
      timeoutMs: Math.max(1_000, ...all.map((o) => o.timeoutMs)),
    });
  }

  private async dispatch(bytes: Uint8Array, ctx: RequestContext): Promise<Uint8Array | AsyncIterable<Uint8Array>> {
    const refuse = (message: string): never => {
      this.network.penalize(ctx.peer, 'invalid_message', message);
      throw new PeerRefusal(message);
    };
    const request = decodeJson(bytes) ?? refuse('request is not a JSON object');
    const kind = typeof request.type === 'string' ? request.type : refuse('request has no type');
    const entry = this.kinds.get(kind) ?? refuse(`unknown request kind: ${kind.slice(0, 64)}`);
    if (bytes.byteLength > entry.opts.maxRequestBytes) refuse(`${kind} request exceeds ${entry.opts.maxRequestBytes} bytes`);
    const signal = AbortSignal.any([ctx.signal, AbortSignal.timeout(entry.opts.timeoutMs)]);
    this.count(kind, 'in', bytes);
    const answer = await entry.handler(request, { ...ctx, signal, kind });
    return isIterable(answer) ? this.counted(kind, encodeAll(answer)) : this.count(kind, 'out', encodeJson(answer));
  }

  /** Adds `bytes` to the payload counters under the kind's channel, and hands them back. */
  private count(kind: string, direction: PayloadDirection, bytes: Uint8Array): Uint8Array {
    this.network.payload?.add(channelOfKind(kind), direction, bytes.byteLength);
    return bytes;
  }

  private async *counted(kind: string, frames: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
    for await (const frame of frames) yield this.count(kind, 'out', frame);
  }

  /** One request, one JSON answer (rejects with PeerNetworkError; a non-object answer is a protocol error). */
  async request(peer: PeerKey, kind: string, body: JsonObject, opts: RequestOptions): Promise<JsonObject> {
    const bytes = this.count(kind, 'in', await this.network.request(peer, SYNC_PROTOCOL, this.count(kind, 'out', encodeJson({ ...body, type: kind })), opts));
    const answer = decodeJson(bytes);
    if (!answer) {
      this.network.penalize(peer, 'invalid_message', `${kind}: the answer is not a JSON object`);
      throw new PeerNetworkError('protocol', `${kind}: the peer answered something other than a JSON object`);
    }
    return answer;
  }

  /** One request, a stream of JSON answers. */
  async *requestStream(peer: PeerKey, kind: string, body: JsonObject, opts: RequestOptions): AsyncIterable<JsonObject> {
    for await (const bytes of this.network.requestStream(peer, SYNC_PROTOCOL, this.count(kind, 'out', encodeJson({ ...body, type: kind })), opts)) {
      const frame = decodeJson(this.count(kind, 'in', bytes));
      if (!frame) {
        this.network.penalize(peer, 'invalid_message', `${kind}: a response frame is not a JSON object`);
        throw new PeerNetworkError('protocol', `${kind}: the peer sent a frame that is not a JSON object`);
      }
      yield frame;
    }
  }
}
