/**
 * The running half of a service that follows topics and pulls from peers: governance replication
 * (governance/replication/replicator.ts) and context sync (sync/service.ts) share it. It holds one
 * lifetime signal (every request, wait and the heartbeat of the service end on it), the listeners
 * the service registered, the topics it follows and its pulls in flight; `stop()` ends all four,
 * in that order, so no pull starts or gossip arrives while the service winds down.
 */
import { every, SingleFlight } from '../schedule.ts';

export class Follower {
  private readonly life = new AbortController();
  private readonly listeners: (() => void)[] = [];
  private readonly topics = new Map<string, () => void>();
  private readonly pulls = new SingleFlight<boolean>();

  /** aborted by `stop()` */
  get signal(): AbortSignal {
    return this.life.signal;
  }

  get stopped(): boolean {
    return this.life.signal.aborted;
  }

  /** Listener removals `stop()` runs. */
  onStop(...removals: (() => void)[]): void {
    this.listeners.push(...removals);
  }

  /** Runs `task` about every `periodMs` (jittered) until `stop()`. */
  every(periodMs: number, task: () => Promise<unknown>): void {
    every(periodMs, task, this.life.signal);
  }

  /** Follows `key` with `subscribe()` (which returns its unsubscribe), unless it is followed already or stopped. */
  follow(key: string, subscribe: () => () => void): void {
    if (this.topics.has(key) || this.stopped) return;
    this.topics.set(key, subscribe());
  }

  unfollow(key: string): void {
    this.topics.get(key)?.();
    this.topics.delete(key);
  }

  /** The followed keys, live: a heartbeat walking them sees an unfollow (or a stop) at once. */
  followed(): IterableIterator<string> {
    return this.topics.keys();
  }

  /** One pull per key at a time: a call while one runs joins it. */
  pull(key: string, run: () => Promise<boolean>): Promise<boolean> {
    return this.pulls.run(key, run);
  }

  async stop(): Promise<void> {
    this.life.abort();
    for (const remove of this.listeners.splice(0)) remove();
    for (const unsubscribe of this.topics.values()) unsubscribe();
    this.topics.clear();
    await this.pulls.settled();
  }
}
