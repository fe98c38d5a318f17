/**
 * Whether the node answers (issue #25 §4 "node unreachable"): one record for the whole app. A call
 * that got no HTTP answer at all (the SDK's `NetworkError` or `TimeoutError`) marks the node down
 * from that moment; while it is down the dashboard asks `GET /admin-api/health` every few seconds,
 * and the first answer (any status: the node is there) marks it up again. The frame shows a banner
 * instead of each page saying `Failed to fetch`, and lists say that they are not known rather than
 * empty (ui.tsx). When the node is back, every page's loads run again (useLoad listens).
 */
import { NetworkError, TimeoutError } from '../../../src/client/index.ts';

/** how often a down node is asked again */
export const RETRY_MS = 3_000;

export interface Reachability {
  /** when the node stopped answering; undefined while it answers */
  downSince?: Date;
  /** attempts since it went down */
  attempts: number;
}

/** An error that means no answer came back (as opposed to an answer saying no). */
export function isUnreachable(err: unknown): boolean {
  if (err instanceof NetworkError || err instanceof TimeoutError) return true;
  // a fetch the SDK did not wrap (e.g. the event stream's own reconnects)
  return err instanceof TypeError && /failed to fetch|networkerror|load failed/i.test(err.message);
}

/** "hh:mm:ss" in the browser's time zone, 24-hour, as the banner says it. */
export const clockTime = (d: Date): string => d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit', hour12: false });

/** The banner's sentence for a node that is down. */
export function downSentence(host: string, since: Date): string {
  return `The node at ${host} is not answering since ${clockTime(since)}, retrying every ${RETRY_MS / 1000} s.`;
}

export class ReachabilityMonitor {
  state: Reachability = { attempts: 0 };
  private readonly listeners = new Set<(state: Reachability, back: boolean) => void>();
  private timer?: ReturnType<typeof setTimeout>;

  /** `probe` resolves when the node answered at all (any HTTP status), rejects when it did not. */
  constructor(private readonly probe: () => Promise<unknown>) {}

  /** A call failed: if without an answer, the node is down from now (and a retry loop starts). */
  failed(err: unknown): void {
    if (!isUnreachable(err) || this.state.downSince) return;
    this.state = { downSince: new Date(), attempts: 0 };
    this.emit(false);
    this.schedule();
  }

  /** A call was answered: the node is up. */
  answered(): void {
    if (!this.state.downSince) return;
    clearTimeout(this.timer);
    this.timer = undefined;
    this.state = { attempts: 0 };
    this.emit(true);
  }

  get down(): boolean {
    return this.state.downSince !== undefined;
  }

  /** `fn(state, back)`: `back` is true when the node has just answered again. */
  onChange(fn: (state: Reachability, back: boolean) => void): () => void {
    this.listeners.add(fn);
    return () => void this.listeners.delete(fn);
  }

  stop(): void {
    clearTimeout(this.timer);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.retry(), RETRY_MS);
  }

  private async retry(): Promise<void> {
    if (!this.state.downSince) return;
    try {
      await this.probe();
      this.answered();
    } catch (err) {
      if (!isUnreachable(err)) return this.answered(); // an HTTP answer, even an error: the node is there
      this.state = { ...this.state, attempts: this.state.attempts + 1 };
      this.emit(false);
      this.schedule();
    }
  }

  private emit(back: boolean): void {
    this.listeners.forEach((fn) => fn(this.state, back));
  }
}
