import type { Kysely } from 'kysely'
import type { Clock } from './clock.js'
import type { Config } from './config.js'
import type { DB } from './storage/schema.js'

/**
 * The CLI works on the database, not through the server, yet prints URLs of the server's (issuers, console links).
 * So `herald serve` records the public URL it serves as, and a command run without `PUBLIC_URL` of its own follows
 * it: started on `PORT=8090`, the server's accounts are not printed under the default `:8080`.
 */
export async function recordPublicUrl(db: Kysely<DB>, publicUrl: string, clock: Clock): Promise<void> {
  const row = { public_url: publicUrl, started_at: clock.now() }
  await db
    .insertInto('herald_server')
    .values({ id: 1, ...row })
    .onConflict((conflict) => conflict.column('id').doUpdateSet(row))
    .execute()
}

/**
 * The public URL a CLI command prints under: its own `PUBLIC_URL` where set (with a warning when the server on this
 * database serves as another), else the one the server recorded, else the default of `PORT`.
 */
export async function publicUrlForCommands(db: Kysely<DB>, config: Pick<Config, 'publicUrl' | 'publicUrlSet'>, warn: (line: string) => void): Promise<string> {
  const served = await db.selectFrom('herald_server').select('public_url').where('id', '=', 1).executeTakeFirst()
  if (!served) return config.publicUrl
  if (!config.publicUrlSet) return served.public_url
  if (served.public_url !== config.publicUrl) {
    warn(`PUBLIC_URL here is ${config.publicUrl}, but the server on this database serves as ${served.public_url}: the URLs printed use PUBLIC_URL`)
  }
  return config.publicUrl
}
