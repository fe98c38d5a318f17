import { describe, expect, it } from 'vitest';
import { OpDag } from './dag.ts';

/** a chain a → b → c → …, each op the parent of the next */
function chain(ids: string[]): OpDag {
  const dag = new OpDag();
  ids.forEach((id, i) => dag.add(id, BigInt(i + 1), i === 0 ? [] : [ids[i - 1]!]));
  return dag;
}

describe('OpDag frontier', () => {
  it('lists the heads, then their ancestors breadth-first, up to the limit', () => {
    const dag = chain(['a', 'b', 'c']);
    dag.add('x', 4n, ['c']);
    dag.add('y', 4n, ['c']);
    expect(dag.frontier(dag.heads(), 10)).toEqual(['x', 'y', 'c', 'b', 'a']);
    expect(dag.frontier(dag.heads(), 3)).toEqual(['x', 'y', 'c']);
    expect(dag.frontier([], 10)).toEqual([]);
  });

  it('lets a peer that lacks our newest op send only what we lack', () => {
    const theirs = chain(['a', 'b', 'c', 'd']);
    const ours = chain(['a', 'b', 'c']);
    ours.add('mine', 4n, ['c']); // written here, not yet arrived there
    // our heads alone name nothing they know: they would send every op they hold
    expect(theirs.lacking(ours.heads())).toEqual(['a', 'b', 'c', 'd']);
    // with the ancestors, only what we lack
    expect(theirs.lacking(ours.frontier(ours.heads(), 64))).toEqual(['d']);
  });
});

describe('OpDag reachingFrontier', () => {
  const ids = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);

  it('is the breadth-first frontier while that fits; past it, offsets 0, 1, 3, 7 … along the path, then the root', () => {
    const dag = chain(['a', 'b', 'c']);
    expect(dag.reachingFrontier(dag.heads(), 64)).toEqual(['c', 'b', 'a']);
    const ten = chain(ids('n', 10)); // n9 is the head, n0 the root
    expect(ten.reachingFrontier(ten.heads(), 5, 4)).toEqual(['n9', 'n8', 'n7', 'n5', 'n1']);
    expect(ten.reachingFrontier(ten.heads(), 6, 5)).toEqual(['n9', 'n8', 'n7', 'n5', 'n1', 'n0']);
  });

  it('lets a peer that lacks far more than 64 of our ops send only a little more than what we lack', () => {
    const common = ids('c', 200);
    const theirs = chain([...common, ...ids('t', 5)]);
    const ours = chain([...common, ...ids('o', 150)]); // 150 ops written here while apart
    // the breadth-first 64 are all ours: they know none and would send all they hold
    expect(theirs.lacking(ours.frontier(ours.heads(), 64))).toHaveLength(205);
    const named = ours.reachingFrontier(ours.heads(), 64);
    expect(named.length).toBeLessThanOrEqual(64);
    const got = theirs.lacking(named);
    expect(got.slice(-5)).toEqual(ids('t', 5)); // what we lack
    // and the known ops between the boundary (depth 150) and the first sample they know: the samples
    // sit at depths 48, 49, 51, 55, 63, 79, 111, 175, … so c175 … c199, 25 ops, instead of 200
    expect(got).toHaveLength(30);
  });

  it('names nothing unknown and nothing twice with several heads', () => {
    const dag = chain(ids('c', 100));
    dag.add('x', 101n, ['c99']);
    dag.add('y', 101n, ['c99']);
    const f = dag.reachingFrontier(dag.heads(), 64);
    expect(new Set(f).size).toBe(f.length);
    expect(f.slice(0, 2)).toEqual(['x', 'y']);
    expect(f).toContain('c0');
  });
});
