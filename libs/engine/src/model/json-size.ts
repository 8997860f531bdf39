/**
 * Whether `value` written as JSON (`JSON.stringify`) would take more than `max` characters,
 * found without writing it: a walk that stops once the count passes `max`, so it takes time in
 * proportion to `max` at most, however large the value is. A value reached twice (one object
 * under two keys, as a YAML alias gives) counts each time, as JSON writes it twice. The count
 * is a lower bound (escapes are not counted): when it passes `max`, the JSON does too. For
 * values as JSON or YAML parsers give them (no undefined, function or cycle).
 */
export function jsonLongerThan(value: unknown, max: number): boolean {
  let count = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') count += v.length + 2;
    else if (typeof v === 'number' || typeof v === 'boolean') count += String(v).length;
    else if (v === null) count += 4;
    else if (Array.isArray(v)) {
      count += 2 + Math.max(0, v.length - 1);
      for (const item of v) stack.push(item);
    } else if (typeof v === 'object') {
      const keys = Object.keys(v);
      count += 2 + Math.max(0, keys.length - 1);
      for (const k of keys) {
        count += k.length + 3;
        stack.push((v as Record<string, unknown>)[k]);
      }
    }
    if (count > max) return true;
  }
  return false;
}
