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
