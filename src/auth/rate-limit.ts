/**
 * Failed-login limiter of `POST /auth/token` (auth-wire §8.1): per (auth_method, public_key)
 * bucket, N failures in a sliding window lock the bucket; a locked attempt also counts as a
 * failure; a success clears the bucket. In memory, bounded in size.
 */
import type { Clock } from '../clock.ts';

const MAX_BUCKETS = 100_000;

export class LoginLimiter {
  private readonly failures = new Map<string, number[]>();

  constructor(
    private readonly clock: Clock,
    private readonly limit: number,
    private readonly windowMs: number,
  ) {}

  static bucket(authMethod: string, publicKey: string): string {
    const a = authMethod.slice(0, 256);
    const k = publicKey.slice(0, 256);
    return `${a.length}:${a}|${k.length}:${k}`;
  }

  /** Seconds until the bucket unlocks, or 0 when it is open. */
  retryAfter(bucket: string): number {
    const recent = this.recent(bucket);
    if (recent.length < this.limit) return 0;
    const oldest = recent[recent.length - this.limit];
    return Math.max(1, Math.ceil((oldest + this.windowMs - this.clock.now()) / 1000));
  }

  fail(bucket: string): void {
    const recent = this.recent(bucket);
    recent.push(this.clock.now());
    this.failures.delete(bucket); // re-insert: Map order doubles as least-recently-used order
    this.failures.set(bucket, recent);
    if (this.failures.size > MAX_BUCKETS) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
  }

  succeed(bucket: string): void {
    this.failures.delete(bucket);
  }

  private recent(bucket: string): number[] {
    const since = this.clock.now() - this.windowMs;
    const list = (this.failures.get(bucket) ?? []).filter((t) => t > since);
    return list;
  }
}
