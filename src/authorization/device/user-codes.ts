import { randomInt } from 'node:crypto'
import { secretDigest } from '../sign-in/flow-store.js'

/**
 * RFC 8628 §6.1: the 20 consonants of "BCDFGHJKLMNPQRSTVWXZ", without vowels (no words) or lookalikes of digits, and
 * eight of them: 20^8 ≈ 2^34.5 codes, which with the brute-force limits of §5.1 no one guesses in a code's lifetime.
 */
const ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ'
const LENGTH = 8

/** A new user code, shown as users read it: `BCDF-GHJK`. */
export function newUserCode(): string {
  let code = ''
  for (let index = 0; index < LENGTH; index++) code += ALPHABET[randomInt(ALPHABET.length)]
  return `${code.slice(0, 4)}-${code.slice(4)}`
}

/**
 * The code as compared: case and dashes (and spaces, which people type between the halves) don't matter
 * (RFC 8628 §6.1). Undefined for what can't be a user code at all.
 */
export function normalizedUserCode(typed: string): string | undefined {
  const code = typed.replace(/[\s-]/g, '').toUpperCase()
  if (code.length !== LENGTH) return undefined
  for (const char of code) if (!ALPHABET.includes(char)) return undefined
  return code
}

/** The digest a user code is stored and looked up as; undefined for what can't be a user code. */
export function userCodeDigest(typed: string): string | undefined {
  const code = normalizedUserCode(typed)
  return code === undefined ? undefined : secretDigest(code)
}
