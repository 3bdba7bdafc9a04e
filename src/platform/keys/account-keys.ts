import { type JWK, type JWSHeaderParameters, errors as joseErrors } from 'jose'
import type { Awaitable } from '../cache/awaitable.js'
import { sharedString } from '../cache/shared-values.js'
import type { SigningAlg, SigningKeysTable } from '../storage/schema.js'
import type { KeyRow, LoadedKey } from './key-material.js'
import type { JwtSigner } from './material.js'
import { type KeyTimeline, publishedKeysAt, signingKeyAt } from './policy.js'

/** An account's usable keys; which one signs is decided by the clock. */
export class AccountKeys {
  constructor(readonly keys: readonly LoadedKey[]) {}

  /** The key that signs for `alg` at `now`, its private key read first if nothing has signed with it yet. */
  signer(alg: SigningAlg, now: number): Awaitable<JwtSigner | undefined> {
    const key = signingKeyAt(this.keys, alg, now)
    return key && (key.material.signer ?? key.material.loadSigner())
  }

  published(now: number): LoadedKey[] {
    return publishedKeysAt(this.keys, now)
  }

  /** A key that may verify a token at `now`; revoked and unpublished keys are never returned. */
  verificationKey(kid: string, now: number): LoadedKey | undefined {
    return this.published(now).find((key) => key.kid === kid)
  }

  /** The same keys, with the same timelines and material. */
  sameAs(other: AccountKeys): boolean {
    return this.keys.length === other.keys.length && this.keys.every((key, index) => key.sameAs(other.keys[index]))
  }
}

/**
 * jose's key resolver for a token of the account: the published key its header names, under the algorithm the
 * header says (JWKSNoMatchingKey otherwise). A key whose public half can't be read rejects with KeyReadFailure, which
 * the caller rethrows rather than taking the token for a bad one.
 */
export function verificationJwk(keys: AccountKeys | undefined, now: number): (header: JWSHeaderParameters) => Promise<JWK> {
  return async (header) => {
    const key = header.kid === undefined ? undefined : keys?.verificationKey(header.kid, now)
    if (!key || key.alg !== header.alg) throw new joseErrors.JWKSNoMatchingKey()
    return key.publicJwk()
  }
}

/** A key row as the key sets read it: its identity and timeline. */
export type KeySetRow = KeyRow & Pick<SigningKeysTable, 'signs_from' | 'retires_at' | 'published_until' | 'revoked_at'>

export function toTimeline(row: KeySetRow): KeyTimeline {
  return {
    kid: row.id,
    alg: sharedString(row.alg),
    signsFrom: row.signs_from,
    retiresAt: row.retires_at,
    publishedUntil: row.published_until,
    revokedAt: row.revoked_at,
  }
}
