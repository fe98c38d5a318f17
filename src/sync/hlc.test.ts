import { describe, expect, it } from 'vitest';
import { HybridClock, parseStamp } from './hlc.ts';

describe('HybridClock', () => {
  it('never goes back: a clock stepping back keeps counting from the last stamp', () => {
    let now = 1_000;
    const c = new HybridClock(() => now);
    const a = c.tick();
    now = 900;
    const b = c.tick();
    now = 2_000;
    const d = c.tick();
    expect([a, b, d]).toEqual(['1000.000000', '1000.000001', '2000.000000']);
    expect(a < b && b < d).toBe(true);
  });

  it('follows a received stamp ahead of it, but not one too far ahead or malformed', () => {
    const c = new HybridClock(() => 1_000);
    c.observe('3000.000004');
    expect(c.tick()).toBe('3000.000005');
    c.observe('99999999.000000');
    c.observe('garbage');
    expect(c.tick()).toBe('3000.000006');
    expect(parseStamp('12.000001')).toEqual({ ms: 12, counter: 1 });
    expect(parseStamp('12.1')).toBeUndefined();
  });
});
