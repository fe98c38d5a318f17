/** Injected wall clock, so token lifetimes and rate-limit windows are testable without sleeping. */
export interface Clock {
  /** milliseconds since the Unix epoch */
  now(): number;
}

export const systemClock: Clock = { now: () => Date.now() };

export const unixSecs = (clock: Clock): number => Math.floor(clock.now() / 1000);
