import { randomBytes } from 'node:crypto'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { rmSync } from 'node:fs'
import pg from 'pg'
import type { DatabaseConfig } from '../../src/platform/config.js'

export type DialectName = 'sqlite' | 'postgres'

/** The PostgreSQL server tests create their databases on (a superuser connection to an existing database). */
export const POSTGRES_ADMIN_URL = process.env.HERALD_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test'

/**
 * The dialects every test runs on: `HERALD_TEST_DIALECTS` (comma-separated) when set, else both. The global
 * setup drops PostgreSQL from the default when no server answers, with a warning; when the variable names
 * PostgreSQL explicitly (as CI does), an unreachable server fails the run instead.
 */
export function requestedDialects(): DialectName[] {
  return (process.env.HERALD_TEST_DIALECTS ?? 'sqlite,postgres')
    .split(',')
    .map((name) => name.trim())
    .filter((name): name is DialectName => name === 'sqlite' || name === 'postgres')
}

export interface TestDatabase {
  config: DatabaseConfig
  drop(): Promise<void>
}

/** A fresh, empty database for one Herald under test: a temporary SQLite file, or a new PostgreSQL database. */
export async function createTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  const suffix = randomBytes(6).toString('hex')
  if (dialect === 'sqlite') {
    const dir = path.join(tmpdir(), `herald-test-${suffix}`)
    return { config: { dialect: 'sqlite', filename: path.join(dir, 'herald.db') }, drop: async () => rmSync(dir, { recursive: true, force: true }) }
  }
  const name = `herald_test_${suffix}`
  await adminQuery(`CREATE DATABASE ${name}`)
  const url = new URL(POSTGRES_ADMIN_URL)
  url.pathname = `/${name}`
  return {
    config: { dialect: 'postgres', connectionString: url.toString() },
    drop: () => adminQuery(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
  }
}

export async function adminQuery(text: string): Promise<void> {
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL })
  await client.connect()
  try {
    await client.query(text)
  } finally {
    await client.end()
  }
}
