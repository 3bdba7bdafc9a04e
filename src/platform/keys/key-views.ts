import { optionalRfc3339, toRfc3339 } from '../clock.js'
import type { SigningAlg, SigningKeysTable } from '../storage/schema.js'

/** A signing key as the management API shows it: its timeline, never its material. */
export interface KeyView {
  kid: string
  alg: SigningAlg
  status: 'upcoming' | 'signing' | 'retiring' | 'retired' | 'revoked'
  created_at: string
  signs_from: string
  retires_at: string | null
  published_until: string | null
  revoked_at: string | null
}

export function toView(row: SigningKeysTable, now: number): KeyView {
  return {
    kid: row.id,
    alg: row.alg,
    status: keyStatus(row, now),
    created_at: toRfc3339(row.created_at),
    signs_from: toRfc3339(row.signs_from),
    retires_at: optionalRfc3339(row.retires_at),
    published_until: optionalRfc3339(row.published_until),
    revoked_at: optionalRfc3339(row.revoked_at),
  }
}

function keyStatus(row: SigningKeysTable, now: number): KeyView['status'] {
  if (row.revoked_at !== null) return 'revoked'
  if (row.signs_from > now) return 'upcoming'
  if (row.retires_at === null || row.retires_at > now) return 'signing'
  return row.published_until !== null && row.published_until <= now ? 'retired' : 'retiring'
}

export function publicKeyEventData(view: KeyView): object {
  return { kid: view.kid, alg: view.alg, signs_from: view.signs_from }
}
