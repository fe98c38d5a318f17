/**
 * The shapes the contexts page (contexts.tsx) is extended with: a row of its list, a column of it,
 * a panel of the selected context. Their own file so the column and panel modules
 * (context-state.tsx, context-sync.tsx) and the page they plug into import the same types without
 * importing each other in a circle.
 */
import type { FunctionComponent } from 'preact';
import type { Application, Context, ContextSyncStatus } from '../../../../src/client/index.ts';
import type { Column } from '../ui.tsx';

/** A context as the list shows it. */
export interface ContextRow {
  context: Context;
  aliases: string[];
  application?: Application;
  /** hearth's sync status (`GET /contexts/sync`); absent on a node without a network */
  sync?: ContextSyncStatus;
}

export interface PanelProps {
  row: ContextRow;
  /** reloads the list (e.g. after an alias changed) */
  reload: () => void;
}

export interface ContextPanel {
  title: string;
  component: FunctionComponent<PanelProps>;
  /** shown only for the contexts this holds for (default: all) */
  shows?: (row: ContextRow) => boolean;
}

export interface ContextColumn extends Column<ContextRow> {
  /** shown only when this holds for some context of the list (default: always) */
  shows?: (row: ContextRow) => boolean;
}
