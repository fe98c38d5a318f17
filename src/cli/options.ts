/**
 * The global options (issue #16: `--output`, `--wide`, `--raw`, `--verbose`) as every command reads
 * them. A file of its own so the commands take the type from here and program.ts, which builds the
 * command tree out of them, is imported by none of them (issue #35: no import closes a circle).
 */
import type { OutputFormat } from './output.ts';

/** The global options as every command sees them (`command.optsWithGlobals()`). */
export interface GlobalOpts {
  output?: OutputFormat;
  wide?: boolean;
  raw?: boolean;
  verbose?: boolean;
}
