import type { Json } from './types.js';

/**
 * A task's input as its row shows it: a CODE node's resolved spec carries the whole program in
 * `code`, which would bury the rest, so the program is taken out (`code`, null when there is
 * none) and `input` is the spec without it (null when nothing else is left). Any other node's
 * input is returned as is.
 */
export function splitTaskInput(nodeType: string, input: Json | undefined): { input: Json | undefined; code: string | null } {
  if (nodeType !== 'CODE' || input === null || typeof input !== 'object' || Array.isArray(input) || typeof input.code !== 'string') {
    return { input, code: null };
  }
  const { code, ...rest } = input;
  return { input: Object.keys(rest).length ? rest : null, code };
}
