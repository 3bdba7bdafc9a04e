/**
 * `values` for an `IN (…)` list, padded with its last value to the next power of two. Each list length is another
 * statement text, which SQLite prepares afresh (its statement cache holds a few hundred texts); batches of every size
 * from 1 to 500 would keep it preparing. Padded, a query has at most ten texts. Repeating a value changes no `IN`.
 */
export function inList<T>(values: readonly T[]): T[] {
  const last = values.at(-1)
  if (last === undefined) return []
  let length = 1
  while (length < values.length) length *= 2
  return [...values, ...Array<T>(length - values.length).fill(last)]
}
