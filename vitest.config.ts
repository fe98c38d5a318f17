import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts', 'web/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    globalSetup: ['test/global-setup.ts'],
    // a frozen test process fails the run, naming its file, instead of waiting for CI's limit
    reporters: ['default', './test/stall-reporter.ts'],
  },
});
