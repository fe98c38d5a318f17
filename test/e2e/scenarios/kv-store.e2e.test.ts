/**
 * Issue #21 §3: the multi-node scenarios (test/e2e/scenarios/define.ts) with kv_store
 * (test/apps/kv_store.ts), the port shaped like an application built with the reference SDK:
 * memory grows in every call, the map's index in one entry, many host calls per method.
 */
import { defineScenarios } from './define.ts';

defineScenarios('kv_store');
