/**
 * The browser tests' Chromium resolution (test/helpers/chromium.ts): `$CHROMIUM_PATH`, then the
 * system paths, then the npm-packaged browser — and that the packaged one really drives a page, so
 * `npm test` passes on a machine without a system browser.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_SYSTEM_PATHS, launchChromium, resolveChromium, systemPaths, unpackLibraries } from '../helpers/chromium.ts';

const packaged = async () => ({ executablePath: '/packaged/chromium' });
const only = (...paths: string[]) => async (p: string) => paths.includes(p);

describe('resolveChromium', () => {
  it('takes CHROMIUM_PATH first when it is executable', async () => {
    const r = await resolveChromium({ env: { CHROMIUM_PATH: '/opt/c' }, isExecutable: only('/opt/c', '/usr/bin/chromium'), packaged });
    expect(r).toMatchObject({ executablePath: '/opt/c', source: 'CHROMIUM_PATH', notes: [] });
  });

  it('passes over a CHROMIUM_PATH that does not exist, saying so, and takes the system browser', async () => {
    const r = await resolveChromium({ env: { CHROMIUM_PATH: '/missing' }, isExecutable: only('/usr/bin/chromium'), packaged });
    expect(r).toMatchObject({ executablePath: '/usr/bin/chromium', source: 'system' });
    expect(r.notes).toEqual(['CHROMIUM_PATH=/missing is not an executable file']);
  });

  it('falls back to the packaged browser when no system path holds one', async () => {
    const r = await resolveChromium({ env: {}, isExecutable: only(), packaged });
    expect(r).toMatchObject({ executablePath: '/packaged/chromium', source: 'packaged' });
    expect(r.notes[0]).toContain('no system Chromium at /usr/bin/chromium');
  });

  it('reads the system paths from HEARTH_CHROMIUM_SYSTEM_PATHS (empty hides them all)', async () => {
    expect(systemPaths({})).toEqual(DEFAULT_SYSTEM_PATHS);
    expect(systemPaths({ HEARTH_CHROMIUM_SYSTEM_PATHS: '/a:/b' })).toEqual(['/a', '/b']);
    expect(systemPaths({ HEARTH_CHROMIUM_SYSTEM_PATHS: '' })).toEqual([]);
    const r = await resolveChromium({ env: { HEARTH_CHROMIUM_SYSTEM_PATHS: '' }, isExecutable: only('/usr/bin/chromium'), packaged });
    expect(r.source).toBe('packaged');
  });
});

it('drives a page with the npm-packaged Chromium when CHROMIUM_PATH is missing and the system browser is hidden', { timeout: 120_000 }, async () => {
  const found = await resolveChromium({ env: { CHROMIUM_PATH: '/nonexistent/chromium', HEARTH_CHROMIUM_SYSTEM_PATHS: '' } });
  expect(found.source).toBe('packaged');
  const browser = await launchChromium(found);
  try {
    const page = await browser.newPage();
    await page.setContent('<button onclick="this.textContent = String(1 + 1)">add</button>');
    await page.getByRole('button').click();
    expect(await page.getByRole('button').textContent()).toBe('2');
  } finally {
    await browser.close();
  }
});

it('runs the packaged Chromium on the libraries its package ships (for machines without NSS)', { timeout: 120_000 }, async () => {
  const found = await resolveChromium({ env: { HEARTH_CHROMIUM_SYSTEM_PATHS: '' } });
  const libs = await unpackLibraries();
  const browser = await launchChromium({ ...found, env: { LD_LIBRARY_PATH: libs } });
  try {
    const page = await browser.newPage();
    await page.setContent('<p>ok</p>');
    expect(await page.textContent('p')).toBe('ok');
  } finally {
    await browser.close();
  }
});
