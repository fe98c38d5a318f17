/**
 * Wraps the stream muxer factory (yamux) to see every connection's traffic without libp2p's
 * metrics component: bytes in and out of the encrypted connection (every protocol, muxer framing
 * included; the Noise handshake and its per-frame overhead excluded), and inbound streams that
 * close before any protocol was agreed (a peer opening protocols this node does not serve).
 */
import './polyfill.ts';
import type { StreamMuxer, StreamMuxerFactory } from '@libp2p/interface';

export interface TrafficHooks {
  bytesIn(n: number): void;
  bytesOut(n: number): void;
  /**
   * An inbound stream closed while its muxer was open and no protocol had been agreed.
   * `streams` is the muxer's live stream list, which the libp2p connection shares (its `streams`).
   */
  unnegotiated(streams: StreamMuxer['streams']): void;
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
        muxer.addEventListener('stream', (e) => {
          const stream = e.detail;
          if (stream.direction !== 'inbound') return;
          stream.addEventListener(
            'close',
            () => {
              if (stream.protocol === '' && muxer.status === 'open') hooks.unnegotiated(muxer.streams);
            },
            { once: true },
          );
        });
        return muxer;
      },
    };
  };
}
