/**
 * Issue #21 §3: the multi-node scenarios (test/e2e/scenarios/define.ts) with the kv test
 * application (test/apps/kv.ts), on three node processes.
 */
import { defineScenarios } from './define.ts';

defineScenarios('kv');
