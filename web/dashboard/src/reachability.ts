/**
 * Whether the node answers (issue #25 §4): a page whose request finds no node (the SDK's
 * `NetworkError`: connection refused, reset) marks the node down since that moment, and the
 * dashboard then probes `/admin-api/health` every {@link PROBE_MS} until it answers again. The frame
 * shows "node at … is not answering since hh:mm:ss, retrying" meanwhile instead of `Failed to
 * fetch` next to empty lists; when the node is back every page loads again (`epoch` changes).
 */
import { useEffect, useState } from 'preact/hooks';
import { NetworkError } from '../../../src/client/index.ts';

export const PROBE_MS = 2000;

export interface Reachability {
  /** when the node stopped answering; undefined while it answers */
  downSince?: Date;
  /** bumped each time the node comes back, so pages reload */
  epoch: number;
}

let state: Reachability = { epoch: 0 };
const listeners = new Set<(s: Reachability) => void>();
let probing = false;

function set(next: Reachability): void {
  state = next;
  for (const l of listeners) l(state);
}

async function probe(origin: string): Promise<void> {
  if (probing) return;
  probing = true;
  try {
    while (state.downSince) {
      await new Promise((r) => setTimeout(r, PROBE_MS));
      const ok = await fetch(`${origin}/admin-api/health`, { signal: AbortSignal.timeout(PROBE_MS) }).then(
        (r) => r.status < 500,
        () => false,
      );
      if (ok) set({ epoch: state.epoch + 1 });
    }
  } finally {
    probing = false;
  }
}

/** A failed request: the node is down when nothing answered. */
export function reportFailure(err: unknown, origin = location.origin): void {
  if (!(err instanceof NetworkError)) return;
  if (!state.downSince) set({ ...state, downSince: new Date() });
  void probe(origin);
}

/** A request answered: the node is up. */
export function reportSuccess(): void {
  if (state.downSince) set({ epoch: state.epoch + 1 });
}

export function useReachability(): Reachability {
  const [s, setS] = useState(state);
  useEffect(() => {
    listeners.add(setS);
    setS(state);
    return () => void listeners.delete(setS);
  }, []);
  return s;
}

/** `hh:mm:ss` of a moment, local time. */
export function clock(d: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}
