import type { Kysely } from 'kysely'
import type { DB } from '../../platform/storage/schema.js'
import type { Tx } from '../../platform/storage/transaction.js'
import { forAccount } from '../../platform/storage/account-queries.js'

/** The OpenID Connect scopes (OIDC Core §5.4, §11): present in every account, listed like any other scope. */
export const OIDC_SCOPES: ReadonlyArray<{ name: string; description: string }> = [
  { name: 'openid', description: 'Sign in with OpenID Connect and receive an ID token' },
  { name: 'profile', description: "The user's default profile claims: name, picture, locale and the like" },
  { name: 'email', description: "The user's email address and whether it is verified" },
  { name: 'offline_access', description: 'A refresh token, to keep access while the user is away' },
]

export async function insertOidcScopes(tx: Tx, accountId: string, now: number): Promise<void> {
  await forAccount(tx.db, accountId)
    .insertInto('scopes', OIDC_SCOPES.map((scope) => ({ ...scope, kind: 'oidc' as const, created_at: now, updated_at: now })))
    .execute()
}

export async function listScopeNames(db: Kysely<DB>, accountId: string): Promise<string[]> {
  const rows = await forAccount(db, accountId).selectFrom('scopes').select('name').execute()
  return rows.map((row) => row.name)
}
