/**
 * The operator command tree (issue #6; reference CLI tree in product.md B4), mounted on the
 * `hearth` program next to `init | run | dev`. Each group lives in its own file.
 */
import type { Command } from 'commander';
import { registerAppCommands } from './app.ts';
import { registerConfigCommands } from './config.ts';
import { registerSessionCommands } from './session.ts';
import { registerStatusCommands } from './status.ts';

export function registerOperatorCommands(program: Command): void {
  registerSessionCommands(program);
  registerStatusCommands(program);
  registerConfigCommands(program);
  registerAppCommands(program);
}
