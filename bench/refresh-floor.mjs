// The floor for refresh-token rotation: what one rotation must write at the least, straight through the driver on the
// database Herald used (its refresh_tokens table, indexes and foreign keys, with Herald stopped): spend the token,
// fenced on its not being spent yet, and insert its successor, with prepared statements. SQLite: one transaction of
//
//   update refresh_tokens set spent_at = ? where id = ? and spent_at is null
//   insert into refresh_tokens (…the row Herald writes…) values (…)
//
// PostgreSQL: the same as one statement, which commits by itself, as Herald writes it (the successor inserted from the
// spending's RETURNING):
//
//   with spent as (update … returning id) insert into refresh_tokens (…) select … from spent
//
// Nothing is read (Herald must first find the token by its digest and its grant), nothing is signed and nothing goes
// over HTTP, so no server doing the whole job gets to it. SQLite: better-sqlite3 with Herald's pragmas (WAL,
// synchronous NORMAL), one connection, synchronous as Herald's is; PostgreSQL: pg with Herald's pool size and as many
// chains in flight as the benchmark keeps.
import { randomBytes, randomUUID } from 'node:crypto'
import SQLite from 'better-sqlite3'
import pg from 'pg'
import { percentile } from './deliveries.mjs'

/** Herald's PostgreSQL pool size (src/platform/storage/database.ts). */
const PG_POOL = 10
const COLUMNS = ['id', 'account_id', 'grant_id', 'client_id', 'token_hash', 'scope', 'idle_ttl', 'expires_at', 'absolute_expires_at', 'spent_at', 'successor', 'created_at']
const SEED_SQL = 'select account_id, grant_id, client_id, scope, idle_ttl, absolute_expires_at from refresh_tokens limit 1'

function statements(p) {
  return {
    spend: `update refresh_tokens set spent_at = ${p(1)} where id = ${p(2)} and spent_at is null`,
    insert: `insert into refresh_tokens (${COLUMNS.join(', ')}) values (${COLUMNS.map((_, i) => p(i + 1)).join(', ')})`,
  }
}

/** PostgreSQL's types for the successor's cells, which a SELECT list does not take from the columns. */
const PG_TYPES = ['text', 'text', 'text', 'text', 'text', 'text', 'integer', 'bigint', 'bigint', 'bigint', 'text', 'bigint']
/** $1: when, $2: the spent token's id, then the successor's row. */
const PG_ROTATE = `with spent as (update refresh_tokens set spent_at = $1 where id = $2 and spent_at is null returning id)
  insert into refresh_tokens (${COLUMNS.join(', ')}) select ${COLUMNS.map((_, i) => `$${i + 3}::${PG_TYPES[i]}`).join(', ')} from spent`

/** A new token of the grant Herald's run left behind, as Herald inserts it (an id, a digest, the grant's lifetimes). */
function successorRow(seed, now) {
  const id = `rt_floor_${randomUUID()}`
  return [id, seed.account_id, seed.grant_id, seed.client_id, randomBytes(32).toString('hex'), seed.scope, seed.idle_ttl, now + seed.idle_ttl * 1000, seed.absolute_expires_at, null, null, now]
}

/** Rotations per second, p50 and p99 in ms, on `database` for `seconds` with `concurrency` chains. */
export async function rotationFloor(dialect, database, { seconds, concurrency }) {
  return dialect === 'sqlite' ? sqliteFloor(database.url.slice('sqlite:'.length), seconds) : postgresFloor(database.url, seconds, concurrency)
}

async function sqliteFloor(file, seconds) {
  const db = new SQLite(file)
  try {
    db.pragma('journal_mode = WAL')
    db.pragma('busy_timeout = 5000')
    db.pragma('foreign_keys = ON')
    db.pragma('synchronous = NORMAL')
    const seed = db.prepare(SEED_SQL).get()
    if (!seed) throw new Error('rotation floor: Herald left no refresh token to take the grant from')
    const sql = statements(() => '?')
    const spend = db.prepare(sql.spend)
    const insert = db.prepare(sql.insert)
    const rotate = db.transaction((id) => {
      const now = Date.now()
      if (spend.run(now, id).changes !== 1) throw new Error(`rotation floor: ${id} was spent already`)
      const row = successorRow(seed, now)
      insert.run(row)
      return row[0]
    })
    const first = successorRow(seed, Date.now())
    insert.run(first)
    let id = first[0]
    return await measure(seconds, 1, async () => {
      id = rotate(id)
    })
  } finally {
    db.close()
  }
}

async function postgresFloor(url, seconds, concurrency) {
  const pool = new pg.Pool({ connectionString: url, max: PG_POOL })
  try {
    const seed = (await pool.query(SEED_SQL)).rows[0]
    if (!seed) throw new Error('rotation floor: Herald left no refresh token to take the grant from')
    const sql = statements((i) => `$${i}`)
    const chains = []
    for (let i = 0; i < concurrency; i++) {
      const row = successorRow(seed, Date.now())
      await pool.query({ name: 'floor-insert', text: sql.insert, values: row })
      chains.push(row[0])
    }
    return await measure(seconds, concurrency, async (worker) => {
      const now = Date.now()
      const row = successorRow(seed, now)
      const rotated = await pool.query({ name: 'floor-rotate', text: PG_ROTATE, values: [now, chains[worker], ...row] })
      if (rotated.rowCount !== 1) throw new Error(`rotation floor: ${chains[worker]} was spent already`)
      chains[worker] = row[0]
    })
  } finally {
    await pool.end()
  }
}

/** `concurrency` workers each running `rotate(worker)` back to back for `seconds`; a failure ends the run. */
async function measure(seconds, concurrency, rotate) {
  const latencies = []
  const started = performance.now()
  const deadline = started + seconds * 1000
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      while (performance.now() < deadline) {
        const at = performance.now()
        await rotate(worker)
        latencies.push(performance.now() - at)
      }
    }),
  )
  const elapsed = (performance.now() - started) / 1000
  return { rotationsPerSecond: latencies.length / elapsed, p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), inFlight: Math.min(concurrency, PG_POOL) }
}
