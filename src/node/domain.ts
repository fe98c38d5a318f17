/**
 * What the composition root asks of a domain's face (`src/<domain>/index.ts`, docs/architecture.md
 * "Where a new domain plugs in"): a name, its routes, its metric series and a lifecycle. The faces
 * return this shape without importing it (a domain sits below `src/node/`): the root checks it where
 * it lists them. `node.ts` starts the list in order and stops it in reverse, and the route table
 * (`routes.ts`) mounts every domain's routes from the list, so adding a domain is one line.
 */
import type { GaugeSource } from '../http/metrics.ts';
import type { RouteGroups } from '../http/route-groups.ts';

export interface Domain {
  readonly name: string;
  /**
   * the domain's routes: named groups, each mounting routes from the deps the face closed over.
   * The route table mounts each group once, behind the guard, when the HTTP app is built (before
   * any domain starts)
   */
  routes?: RouteGroups;
  /** the domain's series for `GET /metrics`, registered once when the node starts */
  metrics?(): Iterable<GaugeSource>;
  /** starts the long-lived parts; awaited before the next domain starts */
  start?(): void | Promise<void>;
  /** work the first request should not pay for, begun by `start`: awaited (all together) before HTTP listens */
  ready?(): Promise<unknown>;
  /**
   * starts what no request needs at once, after HTTP listens, in list order (the peer-to-peer
   * network: its code is the larger part of the node's, and loading it before the listen was a
   * third of a cold start, issue #33). Readiness answers `starting` until every one has started;
   * liveness answers meanwhile. Stopped by `stop`, as the rest is.
   */
  startAfterListen?(): Promise<void>;
  /**
   * ends what must not outlive the HTTP drain, in list order, before requests drain: open event
   * streams would hold the drain, and the store's watcher must not reopen a store that is closing
   */
  beforeStop?(): void;
  /** stops the long-lived parts once requests have drained, in reverse list order */
  stop?(): void | Promise<void>;
}

/** Starts each domain in list order (a domain may use every one before it). */
export async function startDomains(domains: readonly Domain[]): Promise<void> {
  for (const d of domains) await d.start?.();
}

/** Each domain's `startAfterListen`, in list order. */
export async function startAfterListen(domains: readonly Domain[]): Promise<void> {
  for (const d of domains) await d.startAfterListen?.();
}

/** Every domain's `ready`, together. */
export async function domainsReady(domains: readonly Domain[]): Promise<void> {
  await Promise.all(domains.map((d) => d.ready?.()));
}

/** `beforeStop` of each domain, in list order (each only ends timers, listeners and streams: none waits). */
export function quiesceDomains(domains: readonly Domain[], onError?: (err: unknown) => void): void {
  for (const d of domains) {
    try {
      d.beforeStop?.();
    } catch (err) {
      if (!onError) throw err;
      onError(err);
    }
  }
}

/** Stops each domain in reverse list order: a domain stops before the ones it was built on. */
export async function stopDomains(domains: readonly Domain[], onError?: (err: unknown) => void): Promise<void> {
  for (const d of [...domains].reverse()) {
    try {
      await d.stop?.();
    } catch (err) {
      if (!onError) throw err;
      onError(err);
    }
  }
}
