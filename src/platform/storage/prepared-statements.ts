import type { PostgresPool, PostgresPoolClient } from 'kysely'
import type pg from 'pg'

/**
 * Statement texts given a name at most; past this, new texts run unnamed. Herald's queries are a few hundred fixed
 * texts, and each named one costs memory in every PostgreSQL backend of the pool, so the bound only guards against
 * a text that keeps changing.
 */
export const MAX_NAMED_STATEMENTS = 500
/**
 * Texts with more parameters than this run unnamed: batched statements (an IN list, a multi-row insert) have a
 * text per batch size, and so would each fill the names with variants used once.
 */
export const MAX_NAMED_PARAMETERS = 32

/** SQLSTATE 0A000 with this message: a named statement's result columns changed under it (a migration). */
const CHANGED_RESULT_TYPE = 'cached plan must not change result type'

/**
 * A pool whose clients run each statement as a named prepared statement (the extended protocol's Parse once per
 * connection, then only Bind and Execute), sparing PostgreSQL the parse and analysis of a text it has seen, which
 * costs as much as running one of Herald's small statements. Kysely's PostgresDialect runs `client.query(text,
 * values)`; this wraps each client it checks out so that the text travels with a name.
 *
 * Not for a connection pooler in transaction mode (PgBouncer before 1.21, or without `max_prepared_statements`):
 * a statement prepared on one server connection is missing on the next. `HERALD_PG_PREPARED_STATEMENTS=false`.
 */
export function withPreparedStatements(pool: pg.Pool): PostgresPool {
  const names = new StatementNames()
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>()
  return {
    async connect() {
      const client = await pool.connect()
      let wrapper = wrapped.get(client)
      if (wrapper === undefined) {
        wrapper = namingClient(client, names)
        wrapped.set(client, wrapper)
      }
      return wrapper
    },
    end: () => pool.end(),
  }
}

function namingClient(client: pg.PoolClient, names: StatementNames): PostgresPoolClient {
  const query = async (text: string, values: readonly unknown[]): Promise<pg.QueryResult> => {
    // A text without parameters (begin, commit) goes as one simple-protocol message, which costs no less.
    const name = values.length > 0 && values.length <= MAX_NAMED_PARAMETERS ? names.of(text) : undefined
    if (name === undefined) return client.query(text, [...values])
    try {
      return await client.query({ name, text, values: [...values] })
    } catch (error) {
      // The statement's columns changed since this connection prepared it (`select *` after a migration added a
      // column). A fresh name makes every connection prepare it anew. Outside a transaction nothing else failed with
      // it, so it runs again; inside one the transaction is aborted, and only the caller can start it over.
      if (!isChangedResultType(error)) throw error
      names.renew(text)
      if (client.getTransactionStatus() !== 'I') throw error
      return client.query(text, [...values])
    }
  }
  // Kysely asks only for the (text, values) form here: Herald's dialect has no cursor to stream with.
  return { query: query as unknown as PostgresPoolClient['query'], release: () => client.release() }
}

/** One name per statement text, shared by every connection (each prepares a name the first time it runs it). */
export class StatementNames {
  readonly #names = new Map<string, string>()
  #issued = 0

  /** The text's name; undefined once MAX_NAMED_STATEMENTS names were given out. */
  of(text: string): string | undefined {
    const known = this.#names.get(text)
    if (known !== undefined || this.#issued >= MAX_NAMED_STATEMENTS) return known
    return this.#next(text)
  }

  /** Gives the text a new name, so that each connection prepares it again (a stale one is never run again). */
  renew(text: string): void {
    if (this.#issued >= MAX_NAMED_STATEMENTS) this.#names.delete(text)
    else this.#next(text)
  }

  #next(text: string): string {
    const name = `herald_${++this.#issued}`
    this.#names.set(text, name)
    return name
  }
}

function isChangedResultType(error: unknown): boolean {
  return error instanceof Error && 'code' in error && error.code === '0A000' && error.message.includes(CHANGED_RESULT_TYPE)
}
