/**
 * `hearth workflow run` (issue #36): merobox workflow files run on local hearth nodes. The face of
 * src/cli/workflow/: parse.ts reads and checks a file, run.ts runs it, report.ts prints it, command.ts
 * mounts the command on the CLI.
 */
export { loadWorkflow, type Workflow, type Step } from './parse.ts';
export { runWorkflow, StepFailed, type RunOptions } from './run.ts';
export type { RunSummary, StepRecord } from './report.ts';
export { STEPS } from './schema.ts';
