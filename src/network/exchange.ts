/**
 * Request/response exchanges over libp2p streams (network-port.ts `request`, `requestStream`, `handle`;
 * frames.ts for the wire): the requester's side, with one deadline covering dial and answer, and
 * the responder's side, which checks the peer's concurrency and the request's length prefix before
 * reading, runs the handler under its deadline and maps every failure to the port's error kinds.
 * Hostile framing is counted (`NetworkCounters`) and penalized; it never throws out of a handler.
 */
import './polyfill.ts';
import type { Connection, PeerId, Stream } from '@libp2p/interface';
import type { Logger } from 'pino';
import {
  DEFAULT_INBOUND_PER_PEER,
  MAX_FRAME_BYTES,
  PeerNetworkError,
  PeerRefusal,
  type InboundOutcome,
  type PeerKey,
  type PenaltyReason,
  type ProtocolOptions,
  type RequestHandler,
  type RequestOptions,
} from './network-port.ts';
import type { NetworkCounters } from './counters.ts';
import { FramingError, readBody, readRequestLength, readResponse, refusalFrame, requestFrame, responseFrame, TAG } from './frames.ts';
import { peerKeyOf } from './peer-id.ts';
import { untilAborted } from '../abort.ts';
import { deadline } from './deadline.ts';
import { closeWrite, readerOf, reset, stopReading, write } from './stream-io.ts';

/** a reader pauses its stream past this many buffered bytes (plus the frame it waits for) */
const HIGH_WATER = 1024 * 1024;

/** what the exchanges need of the network that runs them */
export interface ExchangeHost {
  readonly counters: NetworkCounters;
  readonly log: Logger;
  /** aborted when the network stops */
  readonly stopping: AbortSignal;
  penalize(peer: PeerKey, reason: PenaltyReason, detail?: string): void;
  isBanned(peer: PeerKey): boolean;
}

export interface Served {
  protocol: string;
  handler: RequestHandler;
  opts: ProtocolOptions;
  /** inbound exchanges in flight per peer */
  inflight: Map<PeerKey, number>;
}

type Dial = (peer: PeerId, protocol: string, signal: AbortSignal) => Promise<Stream>;

/**
 * The requester's side: yields the DATA frames of the answer. The stream is reset when the caller
 * stops early, the deadline passes or the caller's signal aborts.
 */
export async function* requestFrames(host: ExchangeHost, dial: Dial, peer: PeerKey, remote: PeerId, protocol: string, data: Uint8Array, opts: RequestOptions): AsyncGenerator<Uint8Array> {
  if (data.byteLength > MAX_FRAME_BYTES) throw new PeerNetworkError('too_large', `${protocol}: request of ${data.byteLength} bytes exceeds ${MAX_FRAME_BYTES}`);
  const timer = deadline(opts.timeoutMs);
  try {
    yield* exchangeFrames(host, dial, peer, remote, protocol, data, opts, timer.signal);
  } finally {
    timer.clear();
  }
}

async function* exchangeFrames(host: ExchangeHost, dial: Dial, peer: PeerKey, remote: PeerId, protocol: string, data: Uint8Array, opts: RequestOptions, expiry: AbortSignal): AsyncGenerator<Uint8Array> {
  const signal = AbortSignal.any([expiry, host.stopping, ...(opts.signal ? [opts.signal] : [])]);
  const failure = (): PeerNetworkError => {
    if (opts.signal?.aborted) return new PeerNetworkError('aborted', `${protocol}: aborted`);
    if (host.stopping.aborted) return new PeerNetworkError('aborted', `${protocol}: the node is stopping`);
    return new PeerNetworkError('timeout', `${protocol}: no answer within ${opts.timeoutMs} ms`);
  };
  if (signal.aborted) throw failure();
  let stream: Stream;
  try {
    stream = await dial(remote, protocol, signal);
  } catch (err) {
    if (signal.aborted) throw failure();
    if ((err as Error).name === 'UnsupportedProtocolError') throw new PeerNetworkError('unsupported', `${protocol}: the peer does not serve it`);
    throw new PeerNetworkError('unreachable', `${protocol}: could not reach ${peer}: ${(err as Error).message}`);
  }
  const onAbort = () => reset(stream, new Error('the exchange was abandoned'));
  signal.addEventListener('abort', onAbort, { once: true });
  const reader = readerOf(stream, HIGH_WATER);
  try {
    try {
      stream.send(requestFrame(data));
    } catch (err) {
      throw new PeerNetworkError('protocol', `${protocol}: the stream closed before the request was sent (${(err as Error).message})`);
    }
    void closeWrite(stream, signal);
    for (;;) {
      let frame;
      try {
        frame = await readResponse(reader, opts.maxResponseFrameBytes);
      } catch (err) {
        if (signal.aborted) throw failure();
        throw responseFailure(host, peer, protocol, err, opts.maxResponseFrameBytes);
      }
      if (frame.tag === TAG.end) return;
      if (frame.tag === TAG.refused) throw new PeerNetworkError('refused', frame.reason);
      if (frame.tag === TAG.tooLarge) throw new PeerNetworkError('too_large', `${protocol}: ${frame.reason}`);
      yield frame.body;
      if (signal.aborted) throw failure();
    }
  } finally {
    signal.removeEventListener('abort', onAbort);
    if (stream.status === 'open' || stream.status === 'closing') {
      if (stream.remoteWriteStatus === 'closed' && stream.writeStatus === 'closed') void stream.close().catch(() => undefined);
      else reset(stream, new Error('the requester is done'));
    }
  }
}

function responseFailure(host: ExchangeHost, peer: PeerKey, protocol: string, err: unknown, maxData: number): PeerNetworkError {
  if (err instanceof FramingError) {
    if (err.problem === 'oversized') {
      // past our own bound is the caller's limit; past the protocol's frame bound is hostile
      if (err.length > MAX_FRAME_BYTES) host.penalize(peer, 'oversized_frame', `${protocol}: response frame of ${err.length} bytes`);
      return new PeerNetworkError('too_large', `${protocol}: response frame of ${err.length} bytes exceeds ${maxData}`);
    }
    if (err.problem === 'bad_tag') host.penalize(peer, 'malformed_frame', `${protocol}: ${err.message}`);
    return new PeerNetworkError('protocol', `${protocol}: ${err.message}`);
  }
  return new PeerNetworkError('protocol', `${protocol}: the stream broke (${(err as Error)?.message ?? 'reset'})`);
}

/** The responder's side of one inbound stream. Never throws. */
export async function serveStream(host: ExchangeHost, served: Served, stream: Stream, connection: Connection): Promise<void> {
  const peer = peerKeyOf(connection.remotePeer);
  if (!peer || host.isBanned(peer)) {
    reset(stream, new Error('refused peer'));
    return;
  }
  const { protocol, opts } = served;
  let outcome: InboundOutcome | undefined;
  const end = (o: InboundOutcome) => {
    if (outcome !== undefined) return;
    outcome = o;
    host.counters.inbound(protocol, o);
  };
  const timer = deadline(opts.timeoutMs);
  const expired = timer.signal;
  const gone = new AbortController();
  const onClose = () => gone.abort(new Error('the stream closed'));
  stream.addEventListener('close', onClose, { once: true });
  const signal = AbortSignal.any([expired, gone.signal, host.stopping]);
  let reading = true;
  let holdsSlot = false;
  const onAbort = () => {
    if (expired.aborted && outcome === undefined) {
      end(reading ? 'malformed' : 'timeout');
      if (reading) host.penalize(peer, 'stalled_request', `${protocol}: the request did not arrive within ${opts.timeoutMs} ms`);
    }
    reset(stream, new Error(expired.aborted ? 'deadline passed' : 'exchange ended'));
  };
  signal.addEventListener('abort', onAbort, { once: true });
  const malformed = (err: unknown) => {
    if (signal.aborted) return end('cancelled'); // counted by onAbort when it was the deadline
    end('malformed');
    if (err instanceof FramingError) host.penalize(peer, 'malformed_frame', `${protocol}: ${err.message}`);
    reset(stream, new Error('malformed request'));
  };
  try {
    const reader = readerOf(stream, HIGH_WATER);
    // the refusals below wait for the length prefix: the requester has then finished negotiating
    // the protocol, and a refusal sent earlier could be lost in its negotiation read
    let length: number;
    try {
      length = await readRequestLength(reader);
    } catch (err) {
      return malformed(err);
    }
    if (length > opts.maxRequestBytes) {
      end('too_large');
      host.penalize(peer, 'oversized_frame', `${protocol}: request of ${length} bytes`);
      await refuse(stream, refusalFrame(TAG.tooLarge, `request of ${length} bytes exceeds the bound of ${opts.maxRequestBytes}`), signal);
      return;
    }
    const inflight = served.inflight.get(peer) ?? 0;
    if (inflight >= (opts.maxInboundPerPeer ?? DEFAULT_INBOUND_PER_PEER)) {
      end('busy');
      await refuse(stream, refusalFrame(TAG.refused, `${protocol}: too many concurrent requests`), signal);
      return;
    }
    served.inflight.set(peer, inflight + 1);
    holdsSlot = true;
    let request: Uint8Array;
    try {
      request = await readBody(reader, length);
    } catch (err) {
      return malformed(err);
    }
    reading = false;
    stopReading(stream); // one request frame per exchange: anything after it is not read
    await answer(host, served, stream, peer, request, signal, end);
  } catch (err) {
    if (!signal.aborted) host.log.debug({ peer, protocol, err: (err as Error).message }, 'network: inbound exchange failed');
    end(signal.aborted && expired.aborted ? 'timeout' : 'cancelled');
    reset(stream, new Error('exchange failed'));
  } finally {
    timer.clear();
    signal.removeEventListener('abort', onAbort);
    stream.removeEventListener('close', onClose);
    end('cancelled'); // no-op when an outcome was counted: otherwise the requester went away
    if (holdsSlot) {
      const left = (served.inflight.get(peer) ?? 1) - 1;
      if (left > 0) served.inflight.set(peer, left);
      else served.inflight.delete(peer);
    }
  }
}

/** Runs the handler and writes its answer: DATA frames then END, or a refusal. */
async function answer(host: ExchangeHost, served: Served, stream: Stream, peer: PeerKey, request: Uint8Array, signal: AbortSignal, end: (o: InboundOutcome) => void): Promise<void> {
  const { protocol } = served;
  const refusal = async (err: unknown) => {
    if (signal.aborted) return; // the deadline or the requester ended it; counted there
    if (err instanceof PeerRefusal) {
      end('refused');
      await refuse(stream, refusalFrame(TAG.refused, err.message), signal);
      return;
    }
    end('error');
    host.log.debug({ peer, protocol, err: (err as Error)?.message }, 'network: request handler failed');
    await refuse(stream, refusalFrame(TAG.refused, 'the peer could not answer the request'), signal);
  };
  // the handler's promises are raced against the signal: a handler that ignores it must not hold
  // this exchange (and the peer's concurrency slot) past the deadline
  let result: Uint8Array | AsyncIterable<Uint8Array>;
  try {
    result = await untilAborted(Promise.resolve().then(() => served.handler(request, { peer, protocol, signal })), signal);
  } catch (err) {
    return refusal(err);
  }
  const frames = (result instanceof Uint8Array ? only(result) : result)[Symbol.asyncIterator]();
  try {
    for (;;) {
      const next = await untilAborted(frames.next(), signal);
      if (next.done) break;
      const frame = next.value;
      if (frame.byteLength > MAX_FRAME_BYTES) throw new Error(`${protocol}: the handler produced a frame of ${frame.byteLength} bytes`);
      await write(stream, responseFrame(TAG.data, frame), signal);
    }
  } catch (err) {
    void Promise.resolve(frames.return?.()).catch(() => undefined);
    return refusal(err);
  }
  await write(stream, responseFrame(TAG.end), signal);
  end('ok');
  await closeWrite(stream, signal);
  // a requester that never closed its side would keep the stream until yamux's idle timeout. It gets
  // a grace to read the answer first: a QUIC stream reset at once drops the answer still in flight
  // (over QUIC a slow answer, the dial-back probe's, never arrived), where yamux delivers it first
  if (stream.remoteWriteStatus !== 'closed') resetLater(stream, REFUSAL_GRACE_MS, new Error('the requester kept its side open'));
}

/** Resets `stream` after `ms` unless it closes first; holds nothing (no slot, no event loop). */
function resetLater(stream: Stream, ms: number, reason: Error): void {
  const timer = setTimeout(() => reset(stream, reason), ms);
  timer.unref();
  stream.addEventListener('close', () => clearTimeout(timer), { once: true });
}


async function* only(frame: Uint8Array): AsyncIterable<Uint8Array> {
  yield frame;
}

/** How long a refused requester has to hang up before its stream is reset. */
const REFUSAL_GRACE_MS = 2_000;

/**
 * Sends a final refusal frame and ends the stream without reading what the requester sent: what
 * arrives is discarded until the requester hangs up (it does once it reads the refusal) or the
 * grace period ends. Resetting at once could overtake the requester still reading the protocol
 * negotiation, which would lose the refusal.
 */
async function refuse(stream: Stream, frame: Uint8Array, signal: AbortSignal): Promise<void> {
  try {
    await write(stream, frame, signal);
    await closeWrite(stream, signal);
  } catch {
    return; // the requester is gone; nothing to tell it
  }
  if (stream.status !== 'open' && stream.status !== 'closing') return;
  const discard = () => undefined;
  stream.addEventListener('message', discard);
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      stream.removeEventListener('close', done);
      signal.removeEventListener('abort', done);
      resolve();
    };
    const timer = setTimeout(done, REFUSAL_GRACE_MS);
    stream.addEventListener('close', done);
    signal.addEventListener('abort', done);
  });
  stream.removeEventListener('message', discard);
  reset(stream, new Error('refused'));
}
