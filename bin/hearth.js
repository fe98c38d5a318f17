#!/usr/bin/env node
// The `hearth` executable: runs the TypeScript sources through tsx (no build step).
// `npm link` puts it on PATH; or alias hearth="node /path/to/hearth/bin/hearth.js".
import { register } from 'tsx/esm/api';

register();
await import('../src/main.ts');
