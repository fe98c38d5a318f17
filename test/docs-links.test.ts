/**
 * Repository hygiene (issue #16): the README links only to files in the repository, and every
 * relative link in the README and docs/ names a file that exists inside it.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, it } from 'vitest';
import { ROOT } from './helpers/node.ts';

const LINK = /\]\(([^)\s]+)\)/g;
const files = ['README.md', ...readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

it('the README links only to files in the repository', () => {
  const targets = [...readFileSync(join(ROOT, 'README.md'), 'utf8').matchAll(LINK)].map((m) => m[1]);
  expect(targets.length).toBeGreaterThan(5);
  expect(targets.filter((t) => /^[a-z]+:/i.test(t))).toEqual([]);
});

it.each(files)('every relative link in %s names a file inside the repository', (file) => {
  const broken: string[] = [];
  for (const [, target] of readFileSync(join(ROOT, file), 'utf8').matchAll(LINK)) {
    if (/^([a-z]+:|#)/i.test(target)) continue;
    const path = resolve(dirname(join(ROOT, file)), target.split('#')[0]);
    if (relative(ROOT, path).startsWith('..') || !existsSync(path)) broken.push(target);
  }
  expect(broken).toEqual([]);
});
