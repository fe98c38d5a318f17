/**
 * Waiting for a quiet moment on the HTTP server (issue #33): the node starts its peer-to-peer
 * network after it listens, and loading the network's code holds the main thread for ~100 ms
 * (compiling and evaluating the libp2p stack, docs/performance.md "Listening before the
 * peer-to-peer stack loads"). A request arriving meanwhile would wait for it, so the load begins
 * once no request has been in flight for a short while — the first calls after a start go first —
 * and at the latest a bound after the listen, however busy the server is.
 */
import type { Server } from 'node:http';

export interface QuietOptions {
  /** how long no request must have been in flight */
  quietMs: number;
  /** the longest wait, whatever the traffic */
  maxMs: number;
}

/** Resolves once `server` has had no request in flight for `quietMs`, after `maxMs` at most, or when it closes. */
export function whenQuiet(server: Server, opts: QuietOptions): Promise<void> {
  return new Promise((resolve) => {
    let inFlight = 0;
    let quiet: NodeJS.Timeout | undefined;
    const arm = () => {
      clearTimeout(quiet);
      if (inFlight === 0) quiet = setTimeout(done, opts.quietMs);
    };
    const onRequest = (_req: unknown, res: { once(event: 'close', l: () => void): void }) => {
      inFlight++;
      clearTimeout(quiet);
      res.once('close', () => {
        inFlight--;
        arm();
      });
    };
    const bound = setTimeout(done, opts.maxMs);
    function done() {
      clearTimeout(quiet);
      clearTimeout(bound);
      server.off('request', onRequest);
      server.off('close', done);
      resolve();
    }
    server.on('request', onRequest);
    server.once('close', done);
    arm();
  });
}
