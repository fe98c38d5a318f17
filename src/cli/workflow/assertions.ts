/**
 * The statement languages of merobox's `assert` and `json_assert` steps (merobox
 * `steps/assertion.py`, `steps/json_assertion.py`), evaluated as merobox evaluates them:
 *
 * - assert: `contains(A, B)`, `not_contains(A, B)`, `regex(A, PATTERN)`, `is_set(A)`,
 *   `is_empty(A)`, `equal(A, B)` / `equals`, `not_equal(A, B)` / `not_equals`, and `A op B` with
 *   `== != >= <= > <` (numbers when both sides read as numbers, else their text);
 * - json_assert: `json_equal(A, B)` / `equal`, `json_subset(A, B)` / `subset` on JSON values.
 *
 * An operand is a quoted literal (quotes dropped), a `{{var}}` (its value), or text with
 * placeholders substituted. Each statement is a string or `{statement, message}`.
 */
import { parseJsonLike, pyEqual, pyFloat, pyRepr, pyStr, substitute, type Values } from './values.ts';

export interface StatementResult {
  statement: string;
  passed: boolean;
  /** merobox's detail: the operands as they resolved */
  detail: string;
  message?: string;
}

/** One operand, resolved as merobox's `_resolve_dynamic_value` does. */
export function operand(raw: string, values: Values): unknown {
  const s = raw.trim();
  if (s.length >= 2 && ((s.startsWith("'") && s.endsWith("'")) || (s.startsWith('"') && s.endsWith('"'))) && !s.includes('{{')) return s.slice(1, -1);
  return substitute(s, values);
}

const call = (expr: string, name: string) => expr.toLowerCase().startsWith(`${name}(`) && expr.endsWith(')');
const body = (expr: string, name: string) => expr.slice(name.length + 1, -1);
/** every comma splits (merobox's contains/regex) */
const allArgs = (text: string) => text.split(',').map((p) => p.trim());
/** the first comma splits (merobox's equality and JSON predicates) */
const twoArgs = (text: string) => {
  const i = text.indexOf(',');
  return i < 0 ? [text] : [text.slice(0, i).trim(), text.slice(i + 1).trim()];
};

const isSet = (v: unknown) => v !== null && v !== undefined && v !== '' && !(Array.isArray(v) && v.length === 0) && !(typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);

/** Evaluates one `assert` statement. */
export function evalAssert(statement: string, values: Values): Omit<StatementResult, 'statement'> {
  const expr = statement.trim();
  for (const [name, negate] of [['contains', false], ['not_contains', true]] as const) {
    if (!call(expr, name) || (name === 'contains' && expr.toLowerCase().startsWith('not_contains('))) continue;
    const args = allArgs(body(expr, name));
    if (args.length !== 2) return { passed: false, detail: `(invalid ${name} arg count)` };
    const a = operand(args[0]!, values);
    const b = operand(args[1]!, values);
    const inside = pyStr(a).includes(pyStr(b));
    return { passed: negate ? !inside : inside, detail: `(left=${pyRepr(a)}, right=${pyRepr(b)})` };
  }
  if (call(expr, 'regex')) {
    const args = allArgs(body(expr, 'regex'));
    if (args.length !== 2) return { passed: false, detail: '(invalid regex arg count)' };
    const a = operand(args[0]!, values);
    const pattern = operand(args[1]!, values);
    let passed = false;
    try {
      passed = new RegExp(pyStr(pattern)).test(pyStr(a));
    } catch {
      passed = false;
    }
    return { passed, detail: `(left=${pyRepr(a)}, pattern=${pyRepr(pattern)})` };
  }
  if (call(expr, 'is_set')) {
    const a = operand(body(expr, 'is_set'), values);
    return { passed: isSet(a), detail: `(value=${pyRepr(a)})` };
  }
  if (call(expr, 'is_empty')) {
    const a = operand(body(expr, 'is_empty'), values);
    const passed = a === "''" || a === '""' || a === '[]' || a === '{}' || !isSet(a);
    return { passed, detail: `(value=${pyRepr(a)})` };
  }
  for (const [name, negate] of [['not_equals', true], ['not_equal', true], ['equals', false], ['equal', false]] as const) {
    if (!call(expr, name)) continue;
    const args = twoArgs(body(expr, name));
    if (args.length !== 2) return { passed: false, detail: '(invalid equality arg count)' };
    const a = operand(args[0]!, values);
    const b = operand(args[1]!, values);
    const same = pyEqual(a, b);
    return { passed: negate ? !same : same, detail: `(left=${pyRepr(a)}, right=${pyRepr(b)})` };
  }
  const m = /\s(==|!=|>=|<=|>|<)\s/.exec(expr);
  if (m) {
    const a = operand(expr.slice(0, m.index), values);
    const b = operand(expr.slice(m.index + m[0].length), values);
    const na = pyFloat(a);
    const nb = pyFloat(b);
    const [l, r]: [number | string, number | string] = na !== undefined && nb !== undefined ? [na, nb] : [pyStr(a), pyStr(b)];
    const passed = { '==': l === r, '!=': l !== r, '>': l > r, '>=': l >= r, '<': l < r, '<=': l <= r }[m[1] as '==' | '!='];
    return { passed, detail: `(left=${pyRepr(a)}, right=${pyRepr(b)})` };
  }
  return { passed: false, detail: '(unrecognized statement)' };
}

/** True when every key of `right` is in `left` with a subset value (lists: every item present). */
export function isSubset(left: unknown, right: unknown): boolean {
  if (left && right && typeof left === 'object' && typeof right === 'object' && !Array.isArray(left) && !Array.isArray(right)) {
    return Object.entries(right).every(([k, v]) => k in left && isSubset((left as Values)[k], v));
  }
  if (Array.isArray(left) && Array.isArray(right)) return right.every((item) => left.some((l) => pyEqual(l, item)));
  return pyEqual(left, right);
}

/** Evaluates one `json_assert` statement. */
export function evalJsonAssert(statement: string, values: Values): Omit<StatementResult, 'statement'> {
  const expr = statement.trim();
  for (const [name, mode] of [['json_equal', 'equal'], ['json_subset', 'subset'], ['equal', 'equal'], ['subset', 'subset']] as const) {
    if (!call(expr, name)) continue;
    const args = twoArgs(body(expr, name));
    if (args.length !== 2) return { passed: false, detail: `JSON ${mode}: needs two arguments` };
    const left = parseJsonLike(operand(args[0]!, values));
    const right = parseJsonLike(operand(args[1]!, values));
    const passed = mode === 'equal' ? pyEqual(left, right) : isSubset(left, right);
    return { passed, detail: `JSON ${mode === 'equal' ? 'equality' : 'subset'} (left=${JSON.stringify(left)}, right=${JSON.stringify(right)})` };
  }
  return { passed: false, detail: 'Unrecognized JSON assertion' };
}

/** A statement entry of a step: a string or `{statement, message}`. */
export function statementOf(entry: unknown): { statement: string; message?: string } {
  if (typeof entry === 'string') return { statement: entry };
  const e = entry as { statement: string; message?: unknown };
  return { statement: e.statement, message: typeof e.message === 'string' ? e.message : undefined };
}
