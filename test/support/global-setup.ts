import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import pg from 'pg'
import type { TestProject } from 'vitest/node'
import { POSTGRES_ADMIN_URL, requestedDialects, type DialectName } from './dialects.js'

declare module 'vitest' {
  export interface ProvidedContext {
    dialects: DialectName[]
  }
}

const ROOT = fileURLToPath(new URL('../..', import.meta.url))

/**
 * Runs once before any test file. Builds `dist/` (tests that spawn `herald` run the built CLI, and a stale build
 * would test yesterday's code), then checks PostgreSQL and decides whether the default run includes it.
 */
export default async function setup(project: TestProject): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    execFile('npm', ['run', 'build'], { cwd: ROOT, env: process.env }, (error, stdout, stderr) =>
      error ? reject(new Error(`npm run build failed:\n${stdout}\n${stderr}`)) : resolve(),
    )
  })
  const explicit = process.env.HERALD_TEST_DIALECTS
  const dialects = requestedDialects()
  project.provide('dialects', dialects)
  if (!dialects.includes('postgres')) return
  const client = new pg.Client({ connectionString: POSTGRES_ADMIN_URL, connectionTimeoutMillis: 3000 })
  try {
    await client.connect()
    await client.query('select 1')
  } catch (error) {
    if (explicit !== undefined) {
      throw new Error(`HERALD_TEST_DIALECTS includes postgres but ${POSTGRES_ADMIN_URL} is unreachable: ${String(error)}`)
    }
    console.warn(`\n!! PostgreSQL at ${POSTGRES_ADMIN_URL} is unreachable: running the suite on SQLite only.\n!! Set HERALD_TEST_POSTGRES_URL, or HERALD_TEST_DIALECTS=sqlite to silence this.\n`)
    project.provide('dialects', dialects.filter((dialect) => dialect !== 'postgres'))
  } finally {
    await client.end().catch(() => {})
  }
}
