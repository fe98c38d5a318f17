import { describe, expect, it } from 'vitest';
import { StepFailure, type StepContext } from '../context.ts';
import type { Step } from '../parse.ts';
import { LOCAL_STEPS } from './local.ts';

const ctx = (values: Record<string, unknown>) => ({ values, progress: () => undefined }) as unknown as StepContext;
const step = (s: Record<string, unknown>) => s as Step;

describe('assert steps', () => {
  it('fails naming every statement that does not hold', async () => {
    const run = LOCAL_STEPS.assert!(step({ type: 'assert', statements: ['{{n}} == 1', { statement: '{{n}} > 5', message: 'big enough' }, 'is_set({{n}})'] }), ctx({ n: 2 }));
    await expect(run).rejects.toBeInstanceOf(StepFailure);
    await expect(run).rejects.toThrow("{{n}} == 1 failed (left=2, right='1'); big enough failed (left=2, right='5')");
  });

  it('with non_blocking: true reports the failures and passes', async () => {
    const r = (await LOCAL_STEPS.assert!(step({ type: 'assert', non_blocking: true, statements: ['{{n}} == 1', '{{n}} == 2'] }), ctx({ n: 2 }))) as { passed: number; failed: number };
    expect(r).toMatchObject({ passed: 1, failed: 1 });
  });

  it('json_assert evaluates JSON statements', async () => {
    await expect(LOCAL_STEPS.json_assert!(step({ type: 'json_assert', statements: ["json_subset({{r}}, {'a': 1})"] }), ctx({ r: { a: 1, b: 2 } }))).resolves.toMatchObject({ passed: 1 });
    await expect(LOCAL_STEPS.json_assert!(step({ type: 'json_assert', statements: ["json_equal({{r}}, {'a': 1})"] }), ctx({ r: { a: 1, b: 2 } }))).rejects.toThrow(/JSON equality/);
  });
});
