// Entry of a runtime worker. Workers do not inherit the TypeScript loader of the process that
// starts them under vitest, so register tsx here before loading the worker itself (harmless when
// the process already runs under tsx).
import { register } from 'tsx/esm/api';

register();
await import('./worker.ts');
