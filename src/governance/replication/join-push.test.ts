/** join-push.ts: a join op is pushed until a member answers, again on connect and heartbeat, and dropped after its TTL. */
import { describe, expect, it } from 'vitest';
import type { GovOp } from '../types.ts';
import { UnansweredJoins } from './join-push.ts';

const op = { id: 'aa'.repeat(32) } as GovOp;
const settle = () => new Promise((r) => setTimeout(r, 80));

function joins(answers: (only?: readonly string[]) => boolean, opts: { retryMs?: number[]; ttlMs?: number } = {}) {
  const calls: (readonly string[] | undefined)[] = [];
  let now = 1_000;
  const life = new AbortController();
  const j = new UnansweredJoins({
    push: async (_op, only) => {
      calls.push(only);
      return answers(only);
    },
    now: () => now,
    signal: life.signal,
    retryMs: opts.retryMs ?? [5, 10],
    ttlMs: opts.ttlMs ?? 60_000,
  });
  return { j, calls, life, advance: (ms: number) => void (now += ms) };
}

describe('UnansweredJoins', () => {
  it('an op a member answers at once is pushed once and not kept', async () => {
    const { j, calls } = joins(() => true);
    await j.send(op);
    await settle();
    expect(calls).toHaveLength(1);
    expect(j.size).toBe(0);
  });

  it('an unanswered op is tried again after each retry wait, then kept for connect and heartbeat', async () => {
    const { j, calls } = joins(() => false);
    await j.send(op);
    await settle();
    expect(calls).toHaveLength(3); // the first push and the two retries
    expect(j.size).toBe(1);
    await j.again('peer-1'); // a new connection: pushed to that peer only
    expect(calls.at(-1)).toEqual(['peer-1']);
    await j.again(); // the heartbeat: to every connected member
    expect(calls.at(-1)).toBeUndefined();
    expect(calls).toHaveLength(5);
  });

  it('the first answer settles it: no later push', async () => {
    let answer = false;
    const { j, calls } = joins(() => answer, { retryMs: [5, 30] });
    await j.send(op);
    answer = true;
    await settle();
    expect(calls).toHaveLength(2);
    expect(j.size).toBe(0);
    await j.again();
    expect(calls).toHaveLength(2);
  });

  it('an op older than the TTL is dropped, not pushed', async () => {
    const { j, calls, advance } = joins(() => false, { retryMs: [], ttlMs: 1_000 });
    await j.send(op);
    advance(1_001);
    await j.again();
    expect(calls).toHaveLength(1);
    expect(j.size).toBe(0);
  });

  it('a stop ends the retries', async () => {
    const { j, calls, life } = joins(() => false, { retryMs: [50, 50] });
    await j.send(op);
    life.abort();
    await new Promise((r) => setTimeout(r, 150));
    expect(calls).toHaveLength(1);
    await j.again();
    expect(calls).toHaveLength(1);
  });
});
