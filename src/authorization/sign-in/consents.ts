import type { Kysely } from 'kysely'
import { forAccount } from '../../platform/storage/account-queries.js'
import type { DB } from '../../platform/storage/schema.js'
import type { SessionClaims } from './flow-store.js'

/** A consent a user asked to be remembered for a client. */
export interface RememberedConsent {
  scope: string[]
  audience: string[]
  session: SessionClaims
}

/** Remembered consents, one per subject and client: a later request it covers is shown to the consent app with `skip`. */
export class Consents {
  constructor(private readonly db: Kysely<DB>) {}

  async find(accountId: string, subject: string, clientId: string, now: number): Promise<RememberedConsent | undefined> {
    const row = await forAccount(this.db, accountId)
      .selectFrom('consents')
      .selectAll()
      .where('subject', '=', subject)
      .where('client_id', '=', clientId)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
      .executeTakeFirst()
    return row && { scope: row.scope.split(' ').filter(Boolean), audience: JSON.parse(row.audience) as string[], session: JSON.parse(row.session) as SessionClaims }
  }

  /** Records (or replaces) the consent; `expiresAt` null keeps it until it is revoked. */
  async remember(db: Kysely<DB>, accountId: string, subject: string, clientId: string, consent: RememberedConsent, expiresAt: number | null, now: number): Promise<void> {
    const values = { scope: consent.scope.join(' '), audience: JSON.stringify(consent.audience), session: JSON.stringify(consent.session), expires_at: expiresAt, updated_at: now }
    await forAccount(db, accountId)
      .insertInto('consents', { subject, client_id: clientId, ...values, created_at: now })
      .onConflict((conflict) => conflict.columns(['account_id', 'subject', 'client_id']).doUpdateSet(values))
      .execute()
  }
}

/** Whether a remembered consent covers everything a request asks for. */
export function covers(consent: RememberedConsent, scope: readonly string[], audience: readonly string[]): boolean {
  return scope.every((name) => consent.scope.includes(name)) && audience.every((value) => consent.audience.includes(value))
}
