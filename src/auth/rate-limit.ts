/**
 * Failed-login limiter of `POST /auth/token` (auth-wire §8.1, hardened by issue #17 finding 5;
 * policy in docs/security.md "Login throttling"). The reference keys its limit by the caller-chosen
 * `public_key`, so changing that string resets it, and anyone can lock a user out by guessing with
 * their key. Here three limits apply, each a sliding window of failures:
 *
 * - per (username, client address): the user's own attempts; the tightest limit;
 * - per client address, whatever the username: one address spraying many usernames;
 * - per username, whatever the address: many addresses guessing one password. This one never
 *   locks out an address that logged in successfully as that user before (kept in memory, 30 days),
 *   so a stranger elsewhere cannot lock the real user out.
 *
 * A bucket that reaches its limit is locked, and each further lock of the same bucket doubles the
 * lock time (backoff) up to a ceiling; a success clears the user's buckets at that address. State is
 * in memory and bounded (least recently used buckets are dropped first).
 */
import type { Clock } from '../clock.ts';

export interface LoginLimits {
  /** failures per (username, address) in the window */
  perUserAddress: number;
  /** failures per address across usernames */
  perAddress: number;
  /** failures per username across addresses (unknown addresses only) */
  perUser: number;
  windowSecs: number;
  /** ceiling of the doubling lock time */
  maxBackoffSecs: number;
}

const MAX_BUCKETS = 100_000;
const MAX_KNOWN = 100_000;
/** how long an address that logged in as a user stays exempt from that user's global limit */
const KNOWN_ADDRESS_MS = 30 * 24 * 3600 * 1000;
/** a bucket's lock count is forgotten after this long without failures */
const STRIKE_MEMORY_MS = 24 * 3600 * 1000;

interface Bucket {
  failures: number[];
  lockedUntil: number;
  strikes: number;
  lastFailure: number;
}

export class LoginLimiter {
  private readonly buckets = new Map<string, Bucket>();
  /** `username\naddress` → last successful login (ms) */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly clock: Clock,
    private readonly limits: LoginLimits,
  ) {}

  /** Seconds until this (username, address) may try again; 0 when it may now. */
  retryAfter(username: string, address: string): number {
    const now = this.clock.now();
    let wait = 0;
    for (const key of this.keysOf(username, address)) {
      const b = this.buckets.get(key);
      if (b && b.lockedUntil > now) wait = Math.max(wait, b.lockedUntil - now);
    }
    return wait === 0 ? 0 : Math.max(1, Math.ceil(wait / 1000));
  }

  fail(username: string, address: string): void {
    const now = this.clock.now();
    const limits: Record<string, number> = {
      [ua(username, address)]: this.limits.perUserAddress,
      [`a\n${address}`]: this.limits.perAddress,
      [`u\n${username}`]: this.limits.perUser,
    };
    for (const key of this.keysOf(username, address)) this.record(key, limits[key], now);
  }

  succeed(username: string, address: string): void {
    this.buckets.delete(ua(username, address));
    const k = ua(username, address);
    this.known.delete(k);
    this.known.set(k, this.clock.now());
    if (this.known.size > MAX_KNOWN) this.known.delete(this.known.keys().next().value!);
  }

  /** The buckets an attempt by (username, address) is counted in and held back by. */
  private keysOf(username: string, address: string): string[] {
    const keys = [ua(username, address), `a\n${address}`];
    const seen = this.known.get(ua(username, address));
    if (seen === undefined || this.clock.now() - seen > KNOWN_ADDRESS_MS) keys.push(`u\n${username}`);
    return keys;
  }

  private record(key: string, limit: number, now: number): void {
    const windowMs = this.limits.windowSecs * 1000;
    const prev = this.buckets.get(key);
    const b: Bucket = prev ?? { failures: [], lockedUntil: 0, strikes: 0, lastFailure: 0 };
    if (now - b.lastFailure > STRIKE_MEMORY_MS) b.strikes = 0;
    b.lastFailure = now;
    b.failures = b.failures.filter((t) => t > now - windowMs);
    b.failures.push(now);
    if (b.failures.length >= limit && b.lockedUntil <= now) {
      const lockMs = Math.min(windowMs * 2 ** b.strikes, this.limits.maxBackoffSecs * 1000);
      b.lockedUntil = now + lockMs;
      b.strikes++;
      b.failures = [];
    }
    this.buckets.delete(key); // re-insert: Map order doubles as least-recently-used order
    this.buckets.set(key, b);
    if (this.buckets.size > MAX_BUCKETS) this.buckets.delete(this.buckets.keys().next().value!);
  }
}

const ua = (username: string, address: string) => `ua\n${username}\n${address}`;
