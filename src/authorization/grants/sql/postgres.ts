import { type Kysely, sql } from 'kysely'
import { forAccount } from '../../../platform/storage/account-queries.js'
import type { DB } from '../../../platform/storage/schema.js'
import type { NewRefreshTokenRow, RotationSql, Spending } from './rotation-sql.js'

/**
 * PostgreSQL: one statement, which commits by itself, where a transaction would cost four round trips (begin, the
 * spending, the insert, commit). The successor is inserted from the spending's RETURNING, so only a token this
 * statement spent gets one.
 */
export class PostgresRotationSql implements RotationSql {
  constructor(private readonly db: Kysely<DB>) {}

  async rotate(accountId: string, { id, at, sealedSuccessor }: Spending, successor: NewRefreshTokenRow): Promise<boolean> {
    const spent = forAccount(this.db, accountId)
      .updateTable('refresh_tokens')
      .set({ spent_at: at, successor: sealedSuccessor })
      .where('id', '=', id)
      .where('spent_at', 'is', null)
      .returning('account_id')
    const result = await this.db
      .with('spent', () => spent)
      .insertInto('refresh_tokens')
      .columns(['id', 'account_id', 'grant_id', 'client_id', 'token_hash', 'scope', 'idle_ttl', 'expires_at', 'absolute_expires_at', 'created_at'])
      .expression((eb) =>
        eb
          .selectFrom('spent')
          // A SELECT list gives its parameters no type of their own (an INSERT's VALUES takes the columns'): cast.
          .select([
            sql<string>`${successor.id}::text`.as('id'),
            'spent.account_id',
            sql<string>`${successor.grant_id}::text`.as('grant_id'),
            sql<string>`${successor.client_id}::text`.as('client_id'),
            sql<string>`${successor.token_hash}::text`.as('token_hash'),
            sql<string>`${successor.scope}::text`.as('scope'),
            sql<number>`${successor.idle_ttl}::integer`.as('idle_ttl'),
            sql<number>`${successor.expires_at}::bigint`.as('expires_at'),
            sql<number>`${successor.absolute_expires_at}::bigint`.as('absolute_expires_at'),
            sql<number>`${successor.created_at}::bigint`.as('created_at'),
          ]),
      )
      .executeTakeFirst()
    return result.numInsertedOrUpdatedRows === 1n
  }
}
