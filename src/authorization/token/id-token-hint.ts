import { compactVerify } from 'jose'
import { KeyReadFailure } from '../../platform/keys/key-material.js'
import { verificationJwk } from '../../platform/keys/account-keys.js'
import type { KeyStore } from '../../platform/keys/key-store.js'

/** What an `id_token_hint` tells: whose session, for which clients. */
export interface IdTokenHint {
  subject: string
  audience: string[]
  sessionId: string | null
}

/**
 * An ID token this account issued, presented as a hint (OpenID Connect RP-Initiated Logout 1.0 §2): its signature
 * must verify with one of the account's published keys and its `iss` must be the account, but it may have expired,
 * since a logout often comes after the ID token's lifetime. Anything else is no hint at all.
 */
export async function verifyIdTokenHint(keys: KeyStore, accountId: string, issuer: string, token: string, now: number): Promise<IdTokenHint | undefined> {
  const published = await keys.keysOf(accountId)
  try {
    const { payload, protectedHeader } = await compactVerify(
      token,
      verificationJwk(published, now),
      { algorithms: ['RS256', 'ES256'] },
    )
    if (protectedHeader.typ !== undefined && protectedHeader.typ !== 'JWT') return undefined
    const claims = JSON.parse(new TextDecoder().decode(payload)) as { iss?: unknown; sub?: unknown; aud?: unknown; sid?: unknown }
    if (claims.iss !== issuer || typeof claims.sub !== 'string') return undefined
    const audience = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud.filter((value): value is string => typeof value === 'string') : []
    return { subject: claims.sub, audience, sessionId: typeof claims.sid === 'string' ? claims.sid : null }
  } catch (error) {
    if (error instanceof KeyReadFailure) throw error
    return undefined
  }
}
