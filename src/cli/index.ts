/**
 * The operator command tree (issue #6; reference CLI tree in product.md B4), mounted on the
 * `hearth` program next to `init | run | dev`. Each group lives in its own file.
 */
import type { Command } from 'commander';
import { registerAppCommands } from './app.ts';
import { registerAppNodeCommands } from './app-node.ts';
import { registerAliasCommands } from './alias.ts';
import { registerBlobCommands } from './blob.ts';
import { registerKeyCommands } from './key.ts';
import { registerConfigCommands } from './config.ts';
import { registerGroupCommands } from './group.ts';
import { registerNamespaceCommands } from './namespace.ts';
import { registerSessionCommands } from './session.ts';
import { registerStatusCommands } from './status.ts';
import { registerContextCommands } from './context.ts';
import { registerCallCommand } from './call.ts';
import { registerEventsCommands } from './events.ts';
import { registerTeeCommands } from './tee.ts';
import { registerUseCommand } from './use.ts';
import { registerWorkflowCommands } from './workflow/command.ts';

export function registerOperatorCommands(program: Command): void {
  registerSessionCommands(program);
  registerStatusCommands(program);
  registerConfigCommands(program);
  registerAppNodeCommands(registerAppCommands(program));
  registerBlobCommands(program);
  registerAliasCommands(program);
  registerKeyCommands(program);
  registerNamespaceCommands(program);
  registerGroupCommands(program);
  registerCallCommand(registerContextCommands(program));
  registerCallCommand(program);
  registerEventsCommands(program);
  registerTeeCommands(program);
  registerUseCommand(program);
  registerWorkflowCommands(program);
}
