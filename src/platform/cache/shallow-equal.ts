/**
 * Whether two flat records hold the same values: each field strictly equal, or both arrays of the same elements.
 * For cached rows whose fields are primitives (and lists of them).
 */
export function shallowEqual<T extends object>(a: T, b: T): boolean {
  const keys = Object.keys(a) as Array<keyof T>
  if (keys.length !== Object.keys(b).length) return false
  return keys.every((key) => {
    const [x, y] = [a[key], b[key]]
    if (Array.isArray(x) && Array.isArray(y)) return x.length === y.length && x.every((item, index) => item === y[index])
    return x === y
  })
}

/** `cached` when it holds the same values as `fresh`, so that what the cache keeps is not replaced by a copy. */
export function sameOrFresh<T extends object>(cached: T | undefined, fresh: T): T {
  return cached !== undefined && shallowEqual(cached, fresh) ? cached : fresh
}
