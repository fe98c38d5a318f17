/**
 * A TEE provider module for tests (docs/tee.md "Plugging a provider in"): its "quote" is `QUOTE:`
 * followed by the report data, decoded as `{body: {reportdata}}`, so a test can read back exactly
 * what the node bound.
 */
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const FAKE_TEE_MRTD = 'cd'.repeat(48);

/** Writes the module into `dir` and answers its path (the value for `tee.provider`). */
export async function writeFakeTeeProvider(dir: string): Promise<string> {
  const path = join(dir, 'fake-tee.mjs');
  await writeFile(
    path,
    `export function createTeeProvider() {
      return {
        name: 'fake-tdx',
        async info() { return { cloudProvider: 'test-cloud', osImage: 'test-image', mrtd: '${FAKE_TEE_MRTD}' }; },
        async quote(reportData, { includeCollateral }) {
          const hex = Buffer.from(reportData).toString('hex');
          return { quote: Buffer.concat([Buffer.from('QUOTE:'), reportData]), parsed: { body: { reportdata: hex } }, ...(includeCollateral ? { collateral: { tcb: 'UpToDate' } } : {}) };
        },
      };
    }\n`,
  );
  return path;
}
