import { LRUCache } from 'lru-cache'

/**
 * One frozen copy of values that many cached rows hold alike: a scope list, an auth method, an issuer, a whole
 * settings record. JSON.parse and the database drivers make a new string or array for every row read, so ten
 * thousand cached accounts would otherwise keep ten thousand copies of each. Bounded: a value met once (a client's
 * name) holds a place only until less recently met values push it out, and dropping it here frees nothing a cached
 * row still uses.
 */
export class SharedValues<T extends object | string> {
  readonly #values: LRUCache<string, T>

  constructor(max: number) {
    this.#values = new LRUCache({ max })
  }

  /** The kept value under `key`, the value's canonical text; else `make()`'s, frozen and kept from now on. */
  of(key: string, make: () => T): T {
    const kept = this.#values.get(key)
    if (kept !== undefined) return kept
    const value = Object.freeze(make())
    this.#values.set(key, value)
    return value
  }
}

/** Strings (and lists, by their JSON text) longer than this are taken for one row's own, and not looked up. */
const LONGEST_SHARED_STRING = 512
const strings = new SharedValues<string>(4096)
const lists = new SharedValues<readonly string[]>(1024)

export function sharedString<S extends string>(value: S): S {
  return value.length > LONGEST_SHARED_STRING ? value : (strings.of(value, () => value) as S)
}

/** A frozen list, shared by every row that holds the same strings in the same order; a long one is its row's own. */
export function sharedList(values: readonly string[]): readonly string[] {
  const key = JSON.stringify(values)
  return key.length > LONGEST_SHARED_STRING ? values : lists.of(key, () => values.map(sharedString))
}

/** JSON.parse, with every string and list of strings shared (see SharedValues): for documents a cache keeps. */
export function parseShared(json: string): unknown {
  return JSON.parse(json, (_key, value: unknown) => {
    if (typeof value === 'string') return sharedString(value)
    if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return sharedList(value as string[])
    return value
  })
}
