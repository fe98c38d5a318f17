/**
 * `hearth workflow run FILE [--keep] [--nodes-dir DIR]` (issue #36; docs/workflows.md): runs a
 * merobox workflow YAML on local hearth nodes it starts and stops itself. Exit 0 when every step
 * passed; 1 naming the first failing step with its request and answer; 2 for a file that does not
 * read or check (before any node starts).
 */
import type { Command } from 'commander';
import { runWorkflow, StepFailed } from './index.ts';
import { NodeStartError } from '../exit.ts';
import type { GlobalOpts } from '../options.ts';

export function registerWorkflowCommands(program: Command): void {
  const workflow = program.command('workflow').description('merobox workflows: multi-node scenarios from a YAML file, run on local nodes');
  workflow
    .command('run')
    .description('start the nodes a merobox workflow names, run its steps, stop the nodes; exit 0 when every step passed')
    .argument('<file>', 'the workflow YAML (merobox format)')
    .option('--keep', 'leave the nodes running after the steps (until Ctrl-C), to look at them')
    .option('--nodes-dir <dir>', 'put the node homes here (an empty or new folder; kept afterwards) instead of a temporary folder')
    .action(async (file: string, _o: unknown, command: Command) => {
      const opts = command.optsWithGlobals() as GlobalOpts & { keep?: boolean; nodesDir?: string };
      try {
        await runWorkflow({ file, keep: opts.keep, nodesDir: opts.nodesDir, json: opts.output === 'json' });
      } catch (err) {
        // the step and its exchange were printed with the run; the error line names them once more
        if (err instanceof StepFailed) throw new NodeStartError(`workflow ${err.message}`);
        throw err;
      }
    });
}
