import type { SigningAlg } from '../storage/schema.js'

/**
 * How long relying parties may cache the JWKS (its `Cache-Control: max-age`). A rotated-in key is published
 * this long before it signs, so no verifier meets a `kid` its cached JWKS lacks.
 */
export const JWKS_MAX_AGE_SECONDS = 300

/** The lifecycle of one key, in epoch milliseconds. */
export interface KeyTimeline {
  kid: string
  alg: SigningAlg
  signsFrom: number
  retiresAt: number | null
  publishedUntil: number | null
  revokedAt: number | null
}

/** The key that signs `alg` tokens at `now`: the newest whose signing period has begun and not ended. */
export function signingKeyAt<K extends KeyTimeline>(keys: readonly K[], alg: SigningAlg, now: number): K | undefined {
  let best: K | undefined
  for (const key of keys) {
    if (key.alg !== alg || key.revokedAt !== null || key.signsFrom > now) continue
    if (key.retiresAt !== null && key.retiresAt <= now) continue
    if (!best || key.signsFrom > best.signsFrom || (key.signsFrom === best.signsFrom && key.kid > best.kid)) best = key
  }
  return best
}

/** The keys the JWKS lists at `now`: upcoming, current, and retired ones whose tokens may still be alive. */
export function publishedKeysAt<K extends KeyTimeline>(keys: readonly K[], now: number): K[] {
  return keys.filter((key) => key.revokedAt === null && (key.publishedUntil === null || key.publishedUntil > now))
}

export interface RotationPlan {
  /** When the new key starts signing. */
  signsFrom: number
  /** The keys it supersedes, with the times they stop signing and leave the JWKS. */
  retiring: Array<{ kid: string; retiresAt: number; publishedUntil: number }>
}

/**
 * Plans a routine rotation of `alg`: the new key is published now and signs once every cached JWKS has been
 * refreshed; the keys it supersedes sign until then and stay published until the longest token they could
 * have signed has expired.
 */
export function planRotation(keys: readonly KeyTimeline[], alg: SigningAlg, now: number, longestTokenSeconds: number): RotationPlan {
  const signsFrom = now + JWKS_MAX_AGE_SECONDS * 1000
  const retiring = keys
    .filter((key) => key.alg === alg && key.revokedAt === null && key.retiresAt === null)
    .map((key) => ({ kid: key.kid, retiresAt: signsFrom, publishedUntil: signsFrom + longestTokenSeconds * 1000 }))
  return { signsFrom, retiring }
}
