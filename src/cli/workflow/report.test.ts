import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { Reporter, type RunSummary, type StepRecord } from './report.ts';

/** A reporter whose stdout and stderr are kept as text. */
function capture(json: boolean): { report: Reporter; text: () => string } {
  const out = new PassThrough();
  const err = new PassThrough();
  let text = '';
  for (const s of [out, err]) s.on('data', (c: Buffer) => (text += c.toString()));
  return { report: new Reporter(json, out, err), text: () => text };
}

// longer than the 100 characters an exported value is shown with: a cut secret must not show either
const SECRET = 'c0ffee'.repeat(20);

/** A run in which step 1 exports SECRET as `secret1`, marked secret, and step 2 quotes it. */
function run(report: Reporter): void {
  report.stepStart('1', 'Own key', 'script');
  report.exported('1', 'secret1', SECRET, true);
  report.exported('1', 'pk', 'abcd');
  const step: StepRecord = { step: '1', name: 'Own key', type: 'script', status: 'passed', ms: 5, exported: { secret1: SECRET, pk: 'abcd' } };
  report.stepEnd(step);
  report.stepStart('2', `Register ${SECRET}`, 'register_group_signing_key');
  const failed: StepRecord = { step: '2', name: `Register ${SECRET}`, type: 'register_group_signing_key', status: 'failed', ms: 5, exported: {}, error: `refused key ${SECRET}` };
  report.stepEnd(failed);
  const summary: RunSummary = { workflow: 'w', file: 'w.yml', ok: true, nodes: [], home: '/tmp/h', nodesStartMs: 1, durationMs: 2, steps: [step, failed], exported: { secret1: SECRET, pk: 'abcd' }, failed: null, notes: [] };
  report.summary(summary);
}

describe('report: outputs marked secret', () => {
  for (const json of [false, true]) {
    it(`never prints a secret value, where it is exported, quoted or captured (${json ? '--output json' : 'text'})`, () => {
      const { report, text } = capture(json);
      run(report);
      expect(text()).not.toContain(SECRET.slice(0, 40));
      expect(text()).toContain('<secret withheld>');
      expect(text()).toContain('abcd'); // what is not marked secret shows as before
    });
  }

  it('withholds it from the summary document, and leaves values that are not secret alone', () => {
    const { report, text } = capture(true);
    run(report);
    const doc = JSON.parse(text().trim().split('\n').at(-1)!) as RunSummary;
    expect(doc.exported).toEqual({ secret1: '<secret withheld>', pk: 'abcd' });
    expect(doc.steps[1]!.error).toBe('refused key <secret withheld>');
  });

  it('masks a secret inside objects and lists, and masks nothing before one is marked', () => {
    const { report } = capture(false);
    expect(report.masked({ a: [SECRET] })).toEqual({ a: [SECRET] });
    report.secret({ d: SECRET, n: 12345 });
    expect(report.masked({ a: [`x${SECRET}y`], b: 12345, c: 7 })).toEqual({ a: ['x<secret withheld>y'], b: '<secret withheld>', c: 7 });
  });

  it('withholds a short secret as a whole value only, not every place its characters appear', () => {
    const { report, text } = capture(false);
    report.exported('1', 'pin', 7, true);
    report.exported('1', 'code', 'ab', true);
    report.secret({ port: 1 });
    expect(report.masked({ a: 7, b: 'ab', c: 1, d: '1', e: 17 })).toEqual({ a: '<secret withheld>', b: '<secret withheld>', c: '<secret withheld>', d: '<secret withheld>', e: 17 });
    report.stepEnd({ step: '2', name: 'about a table', type: 'script', status: 'passed', ms: 1170, exported: {} });
    expect(text()).toContain("✓ Step 'about a table' completed (1.17 s)");
    expect(text()).toContain('pin = <secret withheld>');
    expect(text()).toContain('code = <secret withheld>');
    expect(text()).not.toMatch(/= 7|= ab/);
  });
});
