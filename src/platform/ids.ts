import { randomFillSync } from 'node:crypto'

/** Crockford's base32: no I, L, O or U, so ids survive being read aloud or retyped. */
const ALPHABET = '0123456789ABCDEFGHJKMNPQRSTVWXYZ'

export type IdPrefix = 'acct' | 'cli' | 'key' | 'evt' | 'ep' | 'sub' | 'dlv' | 'att' | 'grant' | 'job' | 'swp' | 'ses' | 'flow' | 'rt' | 'lo' | 'cl' | 'dev' | 'iat'

/**
 * A prefixed, time-ordered identifier: 48 bits of milliseconds then 80 random bits (the ULID layout),
 * so ids sort by creation time, index well, and say what they name (`acct_01J…`). Ids made in the same
 * millisecond by this process sort in the order they were made, as ULID's monotonic mode has it: the random
 * part is the previous one plus one, so a batch of deliveries written at once lists in the order it was made.
 */
export function newId(prefix: IdPrefix, nowMs: number = Date.now()): string {
  if (nowMs !== lastMs || !increment(lastRandom)) {
    const start = takeRandom(RANDOM_BYTES)
    randomPool.copy(lastRandom, 0, start, start + RANDOM_BYTES)
    lastMs = nowMs
  }
  // 80 random bits as 16 base32 digits, five bits at a time.
  let tail = ''
  let buffer = 0
  let bits = 0
  for (const byte of lastRandom) {
    buffer = (buffer << 8) | byte
    bits += 8
    while (bits >= 5) {
      bits -= 5
      tail += ALPHABET.charAt((buffer >> bits) & 31)
    }
  }
  return `${prefix}_${encodeTime(nowMs)}${tail}`
}

const RANDOM_BYTES = 10
/**
 * Random bytes drawn from the CSPRNG a page at a time: a call per id costs more than the id's other work, and
 * ids are made several per request (as node:crypto does for randomUUID).
 */
const randomPool = Buffer.alloc(4096)
let poolOffset = randomPool.length

/** The millisecond and random part of the last id made. */
let lastMs = -1
const lastRandom = Buffer.alloc(RANDOM_BYTES)

/** Adds one to `bytes` as a big-endian number; false when it was all ones (and wrapped to zero). */
function increment(bytes: Buffer): boolean {
  for (let i = bytes.length - 1; i >= 0; i--) {
    const byte = bytes[i]!
    if (byte < 255) {
      bytes[i] = byte + 1
      return true
    }
    bytes[i] = 0
  }
  return false
}

/** Where the next `count` unused random bytes start in the pool. */
function takeRandom(count: number): number {
  if (poolOffset + count > randomPool.length) {
    randomFillSync(randomPool)
    poolOffset = 0
  }
  const start = poolOffset
  poolOffset += count
  return start
}

/**
 * The smallest id of `prefix` that could be made at `ms`: every id made at or after `ms` sorts at or after it,
 * every id made before sorts before it. Lets a time range be an id range on an index that has only ids.
 */
export function idBoundary(prefix: IdPrefix, ms: number): string {
  return `${prefix}_${encodeTime(Math.max(0, ms))}${'0'.repeat(16)}`
}

function encodeTime(ms: number): string {
  let time = ''
  let remaining = ms
  for (let i = 0; i < 10; i++) {
    time = ALPHABET.charAt(remaining % 32) + time
    remaining = Math.floor(remaining / 32)
  }
  return time
}

/**
 * Whether the id `earlier` was made before `later`, whatever their prefixes: exact for ids made by one process, to the
 * millisecond for ids made by two.
 */
export function madeBefore(earlier: string, later: string): boolean {
  return earlier.slice(earlier.indexOf('_') + 1) < later.slice(later.indexOf('_') + 1)
}

const ID_PATTERN = /^[a-z]+_[0-9A-HJKMNP-TV-Z]{26}$/

export function looksLikeId(prefix: IdPrefix, value: string): boolean {
  return value.startsWith(`${prefix}_`) && ID_PATTERN.test(value)
}
