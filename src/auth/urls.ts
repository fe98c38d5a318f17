/**
 * The node URL a key or token may be bound to (auth-wire §2.8, §2.13: `target_node_url`; §4.5 host
 * binding). Bounded and checked at the edge (issue #17 finding 7): a megabyte of text in a claim
 * that every later request carries is a cost, not a binding.
 */

/** Longest node URL accepted (browsers' practical URL limit is far above any node address). */
export const MAX_NODE_URL_LENGTH = 2048;

/** Why `value` cannot be a node URL, or undefined when it is absent, empty or a valid http(s) URL. */
export function nodeUrlProblem(value: string | undefined, field: string): string | undefined {
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_NODE_URL_LENGTH) return `Invalid ${field}: at most ${MAX_NODE_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return `Invalid ${field}: expected an absolute http(s) URL such as http://127.0.0.1:2528`;
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || !url.host) {
    return `Invalid ${field}: expected an absolute http(s) URL such as http://127.0.0.1:2528`;
  }
  return undefined;
}
