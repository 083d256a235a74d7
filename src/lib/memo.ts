/**
 * Answers kept per object and key, for as long as the object lives: a column's text under each
 * alias, a calendar's holiday answer per date. The object is the first key (a `WeakMap`, so what
 * a request built goes with it); `compute` runs once per object and key.
 */
export function keptFor<O extends object, V>(
  answers: WeakMap<O, Map<string, V>>,
  owner: O,
  key: string,
  compute: () => V,
): V {
  let byKey = answers.get(owner);
  if (!byKey) {
    byKey = new Map();
    answers.set(owner, byKey);
  }
  let value = byKey.get(key);
  if (value === undefined) {
    value = compute();
    byKey.set(key, value);
  }
  return value;
}
