/**
 * Wraps the stream muxer factory (yamux) to see every connection's traffic without libp2p's
 * metrics component: bytes in and out of the encrypted connection (every protocol, muxer framing
 * included; the Noise handshake and its per-frame overhead excluded), and inbound streams whose
 * protocol negotiation (multistream-select) failed after the peer's first proposal named a
 * protocol this node does not serve. A negotiation cut short for another reason (the peer's own
 * timeout, a closing connection) proposed a served protocol and is not reported.
 */
import './polyfill.ts';
import type { Stream, StreamMuxer, StreamMuxerFactory } from '@libp2p/interface';

/** multistream-select's own messages, never a protocol a node serves */
const MSS_CONTROL = new Set(['/multistream/1.0.0', 'ls']);
/** bytes of a stream's first chunk parsed for proposals (a protocol id is at most 1 KiB) */
const SNIFF_BYTES = 2048;

export interface TrafficHooks {
  bytesIn(n: number): void;
  bytesOut(n: number): void;
  /** whether this node serves the protocol (the negotiation will agree on it) */
  serves(protocol: string): boolean;
  /**
   * An inbound stream's negotiation failed while its muxer was open, and the protocols the peer
   * first proposed (`proposed`) are none this node serves. `streams` is the muxer's live stream
   * list, which the libp2p connection shares (its `streams`), to find the peer by.
   */
  unnegotiated(streams: StreamMuxer['streams'], proposed: string[]): void;
}

export function trafficMuxer<C>(inner: (components: C) => StreamMuxerFactory, hooks: TrafficHooks): (components: C) => StreamMuxerFactory {
  return (components) => {
    const factory = inner(components);
    return {
      protocol: factory.protocol,
      createStreamMuxer(maConn) {
        const muxer = factory.createStreamMuxer(maConn);
        // the muxer writes through `maConn.send`; an own property shadows the method for this connection
        const send = maConn.send.bind(maConn);
        maConn.send = (data) => {
          hooks.bytesOut(data.byteLength);
          return send(data);
        };
        // added after the muxer's own listener, so no data is dispatched before the muxer hears it
        maConn.addEventListener('message', (e) => hooks.bytesIn(e.data.byteLength));
        // Listening for streams from the start would make the muxer hand the peer's first streams
        // to this listener alone (it keeps them for later only while nobody listens), before the
        // libp2p connection listens: so this listener joins when the connection's does.
        const listen = muxer.addEventListener.bind(muxer) as (type: 'stream', listener: (e: CustomEvent<Stream>) => void) => void;
        let joined = false;
        muxer.addEventListener = ((...args: Parameters<typeof listen>) => {
          listen(...args);
          if (args[0] !== 'stream' || joined) return;
          joined = true;
          listen('stream', onStream);
        }) as typeof muxer.addEventListener;
        const onStream = (e: CustomEvent<Stream>) => {
          const stream = e.detail;
          if (stream.direction !== 'inbound') return;
          // Reads only the first chunk the peer sends (its first proposal, multistream's header
          // and protocol written together), alongside the negotiation's own reader, attached in
          // the same dispatch. Reading on could leave this listener the only one for an instant
          // after the negotiation hands the stream over, and a chunk delivered then would be lost.
          let proposed: string[] = [];
          const sniff = (m: { data: { byteLength: number; subarray(begin?: number, end?: number): Uint8Array } }) => {
            stream.removeEventListener('message', sniff);
            proposed = proposals(m.data.subarray(0, Math.min(SNIFF_BYTES, m.data.byteLength))).filter((p) => !MSS_CONTROL.has(p));
          };
          const stop = () => stream.removeEventListener('message', sniff);
          stream.addEventListener('message', sniff);
          stream.addEventListener(
            'close',
            () => {
              stop();
              if (stream.protocol !== '' || muxer.status !== 'open' || proposed.length === 0) return;
              if (!proposed.some((p) => hooks.serves(p))) hooks.unnegotiated(muxer.streams, proposed);
            },
            { once: true },
          );
        };
        return muxer;
      },
    };
  };
}

/** The protocol ids in multistream-select messages (uvarint length, then `<id>\n`), as far as they are complete. */
export function proposals(bytes: Uint8Array): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < bytes.byteLength) {
    let length = 0;
    let shift = 0;
    let b: number;
    do {
      if (at >= bytes.byteLength || shift > 14) return out;
      b = bytes[at++]!;
      length |= (b & 0x7f) << shift;
      shift += 7;
    } while (b & 0x80);
    if (at + length > bytes.byteLength) return out;
    const text = Buffer.from(bytes.subarray(at, at + length)).toString('utf8');
    out.push(text.endsWith('\n') ? text.slice(0, -1) : text);
    at += length;
  }
  return out;
}
