import { describe, expect, it } from 'vitest';
import { PenaltyBox } from './penalties.ts';

const P = 'a'.repeat(64);
const Q = 'b'.repeat(64);

describe('PenaltyBox', () => {
  it('bans a peer at the threshold within the window, for the ban period, counting every reason', () => {
    let now = 1_000_000;
    const box = new PenaltyBox({ threshold: 3, windowMs: 1_000, banMs: 5_000 }, () => now);
    expect(box.record(P, 'replay')).toBe(false);
    now += 600;
    expect(box.record(P, 'replay')).toBe(false);
    now += 600; // the first penalty left the window
    expect(box.record(P, 'bad_signature')).toBe(false);
    expect(box.record(Q, 'replay')).toBe(false);
    expect(box.isBanned(P)).toBe(false);
    expect(box.record(P, 'bad_signature')).toBe(true);
    expect(box.isBanned(P)).toBe(true);
    expect(box.isBanned(Q)).toBe(false);
    expect(box.record(P, 'replay')).toBe(false); // counted, already banned
    expect(box.penalties()).toEqual({ replay: 4, bad_signature: 2 });
    expect(box.banned()).toEqual([{ peer: P, until: now + 5_000 }]);
    now += 5_001;
    expect(box.isBanned(P)).toBe(false);
    expect(box.banned()).toEqual([]);
  });

  it('forgets peers whose penalties aged out once many are tracked', () => {
    let now = 0;
    const box = new PenaltyBox({ threshold: 5, windowMs: 10, banMs: 10 }, () => now);
    for (let i = 0; i < 2_000; i++) box.record(i.toString(16).padStart(64, '0'), 'invalid_message');
    now += 100;
    box.record(P, 'invalid_message'); // sweeps the aged-out peers
    expect((box as unknown as { recent: Map<string, number[]> }).recent.size).toBe(1);
  });
});
