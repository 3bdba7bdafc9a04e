import type { Kysely } from 'kysely'

/**
 * Where the browser goes after a logout that names no `post_logout_redirect_uri` of the client's (Ory Hydra's
 * `urls.post_logout_redirect`): a page of the account's own app, unset by default. The same on both dialects.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('account_settings').addColumn('post_logout_url', 'text').execute()
}
