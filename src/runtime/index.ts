/**
 * The runtime domain's face: the WebAssembly host running application methods (its worker pool,
 * queue and call deadline from `[runtime]`), with the node's blobs and sealing handed in, and the
 * idle compactor that runs a full GC once the node falls idle after load (issue #22 memory).
 *
 * @example
 * const runtime = createRuntime({ blobs, identity, config: config.runtime });
 * await runtime.runtime.call(…);
 */
import type { BlobService } from '../blobs/index.ts';
import type { NodeConfig } from '../config/config.ts';
import type { GaugeSource } from '../http/metrics.ts';
import { blobAccess } from './blob-access.ts';
import { IdleCompactor } from './idle-compactor.ts';
import { WasmRuntime } from './runtime.ts';
import { identitySealing, type RootHolder } from './sealing.ts';

/** how many compiled modules the runtime keeps: what the node prepares on start at most */
export { DEFAULT_MODULE_CACHE_SIZE } from './limits.ts';

export interface RuntimeDeps {
  blobs: BlobService;
  /** the node identity that seals and opens executors' secrets */
  identity: RootHolder;
  config: NodeConfig['runtime'];
  /** a failed start (the workers warm up in the background) */
  onError: (err: unknown) => void;
}

export interface RuntimeDomain {
  readonly name: 'runtime';
  runtime: WasmRuntime;
  /** a call's deadline from `[runtime] deadline_ms`, or undefined for the default */
  callDeadlineMs?: number;
  metrics(): Iterable<GaugeSource>;
  start(): void;
  beforeStop(): void;
  stop(): Promise<void>;
}

export function createRuntime(d: RuntimeDeps): RuntimeDomain {
  // a deadline of 0 (or less) would fail every call at once: it means the default
  const callDeadlineMs = d.config.deadlineMs > 0 ? d.config.deadlineMs : undefined;
  const runtime = new WasmRuntime({
    blobs: blobAccess(d.blobs),
    sealing: identitySealing(d.identity),
    poolSize: d.config.workers,
    queueLimit: d.config.queueLimit,
    deadlineMs: callDeadlineMs,
  });
  const compactor = new IdleCompactor();
  return {
    name: 'runtime',
    runtime,
    callDeadlineMs,
    metrics: () => [...runtime.series(), ...compactor.series()],
    start: () => {
      // Workers warm up in the background: readiness does not wait for them, and a call that
      // arrives first waits for a free worker (the runtime counts a loading worker as busy).
      runtime.start().catch(d.onError);
      compactor.start();
    },
    beforeStop: () => compactor.stop(),
    stop: () => runtime.stop(),
  };
}

// What the other folders use of this domain: they import it only through this face (issue #35).
export type { CallFailure, CallRequest, CallResult, CallSuccess, IndexView, Runtime, Writes } from './call-types.ts';
