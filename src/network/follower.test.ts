import { describe, expect, it } from 'vitest';
import { Follower } from './follower.ts';

describe('Follower', () => {
  it('subscribes a topic once, and unsubscribes it on unfollow', () => {
    const f = new Follower();
    const log: string[] = [];
    const sub = (key: string) => () => {
      log.push(`sub ${key}`);
      return () => log.push(`unsub ${key}`);
    };
    f.follow('a', sub('a'));
    f.follow('a', sub('a'));
    f.follow('b', sub('b'));
    expect([...f.followed()]).toEqual(['a', 'b']);
    f.unfollow('a');
    f.unfollow('a');
    expect([...f.followed()]).toEqual(['b']);
    expect(log).toEqual(['sub a', 'sub b', 'unsub a']);
  });

  it('joins a pull already running for the same key', async () => {
    const f = new Follower();
    let runs = 0;
    let release!: (v: boolean) => void;
    const run = () => {
      runs++;
      return new Promise<boolean>((r) => (release = r));
    };
    const first = f.pull('ns|peer', run);
    const second = f.pull('ns|peer', run);
    release(true);
    expect(await Promise.all([first, second])).toEqual([true, true]);
    expect(runs).toBe(1);
  });

  it('stops: aborts its signal, removes listeners, unsubscribes topics, waits for pulls in flight, follows nothing after', async () => {
    const f = new Follower();
    const log: string[] = [];
    f.onStop(() => log.push('listener removed'));
    f.follow('t', () => () => log.push('topic unsubscribed'));
    let release!: () => void;
    void f.pull('p', () => new Promise<boolean>((r) => (release = () => r(true))).finally(() => log.push('pull settled')));
    f.signal.addEventListener('abort', () => log.push('aborted'));

    const stopping = f.stop().then(() => log.push('stopped'));
    await new Promise((r) => setTimeout(r, 10));
    expect(log).toEqual(['aborted', 'listener removed', 'topic unsubscribed']); // still waiting for the pull
    release();
    await stopping;
    expect(log.slice(3)).toEqual(['pull settled', 'stopped']);
    expect(f.stopped).toBe(true);

    f.follow('late', () => () => log.push('late unsubscribed'));
    expect([...f.followed()]).toEqual([]);
  });

  it('runs its heartbeat until stopped', async () => {
    const f = new Follower();
    let beats = 0;
    f.every(5, async () => void beats++);
    for (let i = 0; i < 200 && beats < 2; i++) await new Promise((r) => setTimeout(r, 10));
    await f.stop();
    const seen = beats;
    expect(seen).toBeGreaterThanOrEqual(2);
    await new Promise((r) => setTimeout(r, 40));
    expect(beats).toBe(seen);
  });
});
