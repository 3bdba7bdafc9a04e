import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createConnection, createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { createDataFolder } from '../platform/storage/data-folder.js'
import { describeStartupFailure, type StartupContext } from './startup-failure.js'

const coded = (code: string, message: string, fields: object = {}) => Object.assign(new Error(message), { code }, fields)

const sqlite: StartupContext = { database: { dialect: 'sqlite', filename: '/srv/herald/herald.db' }, portVariable: 'PORT' }
const postgres = (url: string): StartupContext => ({ database: { dialect: 'postgres', connectionString: url }, portVariable: 'PORT' })

function listen(server: Server, port: number, host: string): Promise<Error | undefined> {
  return new Promise((resolve) => {
    server.once('error', resolve)
    server.listen(port, host, () => resolve(undefined))
  })
}

/** The error Node gives a connection to `port` on 127.0.0.1 where nothing listens. */
async function refusedConnection(): Promise<{ error: Error; port: number }> {
  const server = createServer()
  await listen(server, 0, '127.0.0.1')
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('expected a TCP address')
  await new Promise((resolve) => server.close(resolve))
  const error = await new Promise<Error>((resolve) => createConnection(address.port, '127.0.0.1').once('error', resolve))
  return { error, port: address.port }
}

describe('describeStartupFailure', () => {
  const held: Server[] = []
  let scratch = ''
  afterAll(async () => {
    await Promise.all(held.map((server) => new Promise((resolve) => server.close(resolve))))
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  })

  it('names the port in use and the variable that chose it', async () => {
    const first = createServer()
    held.push(first)
    await listen(first, 0, '127.0.0.1')
    const { port } = first.address() as { port: number }
    const error = await listen(createServer(), port, '127.0.0.1')
    expect(describeStartupFailure(error, sqlite)).toBe(`port ${port} on 127.0.0.1 is already in use (another Herald?): stop what listens there, or set PORT to a free port`)
    expect(describeStartupFailure(error, { ...sqlite, portVariable: 'HERALD_WORKER_PORT' })).toMatch(/set HERALD_WORKER_PORT to a free port$/)
  })

  it('names a HOST that is not this machine\'s, and a port that needs privileges', async () => {
    // 192.0.2.0/24 is TEST-NET-1 (RFC 5737): never a local address.
    const error = await listen(createServer(), 0, '192.0.2.1')
    expect(describeStartupFailure(error, sqlite)).toMatch(/^can't listen on 192\.0\.2\.1: it is not an address of this machine; set HOST/)
    const denied = coded('EACCES', 'listen EACCES: permission denied 0.0.0.0:80', { syscall: 'listen', address: '0.0.0.0', port: 80 })
    expect(describeStartupFailure(denied, sqlite)).toMatch(/^not allowed to listen on port 80 on 0\.0\.0\.0: .* set PORT to 1024 or above$/)
  })

  it('names the PostgreSQL server DATABASE_URL gives when nothing answers there', async () => {
    const { error, port } = await refusedConnection()
    expect(describeStartupFailure(error, postgres(`postgres://herald@127.0.0.1:${port}/herald`))).toBe(
      `can't reach PostgreSQL at 127.0.0.1:${port} (connection refused): start the server, or correct the host and port in DATABASE_URL`,
    )
    // localhost has two addresses; Node reports both failures at once.
    const both = new AggregateError([error, error])
    expect(describeStartupFailure(both, postgres('postgres://localhost/herald'))).toMatch(/^can't reach PostgreSQL at localhost:5432 \(connection refused\)/)
    expect(describeStartupFailure(coded('ENOTFOUND', 'getaddrinfo ENOTFOUND db.internal'), postgres('postgres://db.internal:6543/herald'))).toMatch(
      /^can't reach PostgreSQL at db\.internal:6543 \(no such host\)/,
    )
  })

  it('says a database does not exist and how to create it', () => {
    const error = coded('3D000', 'database "herald_dev" does not exist')
    expect(describeStartupFailure(error, postgres('postgres://postgres@127.0.0.1:5432/herald_dev'))).toBe(
      'PostgreSQL database "herald_dev" does not exist at 127.0.0.1:5432: create it with `createdb -h 127.0.0.1 -p 5432 -U postgres herald_dev` (or CREATE DATABASE "herald_dev";), or correct DATABASE_URL',
    )
  })

  it('passes on the server\'s refusal of the credentials', () => {
    const error = coded('28P01', 'password authentication failed for user "herald"')
    expect(describeStartupFailure(error, postgres('postgres://herald:wrong@db:5432/herald'))).toBe(
      'PostgreSQL at db:5432 refused the connection: password authentication failed for user "herald"; correct the user and password in DATABASE_URL',
    )
  })

  it('names the data folder that can\'t be created, and the SQLite file that can\'t be opened', () => {
    scratch = mkdtempSync(path.join(tmpdir(), 'herald-startup-'))
    const file = path.join(scratch, 'a-file')
    writeFileSync(file, '')
    const folder = path.join(file, 'data')
    const error = catching(() => createDataFolder(folder))
    expect(describeStartupFailure(error, sqlite)).toBe(`can't create the data folder ${folder} (not a directory): choose one Herald may create, with DATABASE_URL=sqlite:/path/to/herald.db`)
    expect(describeStartupFailure(coded('SQLITE_CANTOPEN', 'unable to open database file'), sqlite)).toMatch(/^can't open the SQLite database \/srv\/herald\/herald\.db: /)
  })

  it('leaves every other error to its stack: a bug is not a start-up failure', () => {
    for (const [error, context] of [
      [new TypeError('x is undefined'), sqlite],
      [coded('23505', 'duplicate key value violates unique constraint'), postgres('postgres://db/herald')],
      [coded('SQLITE_CONSTRAINT_UNIQUE', 'UNIQUE constraint failed'), sqlite],
      [coded('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:5432'), sqlite],
      ['text', sqlite],
    ] as const) {
      expect(describeStartupFailure(error, context), String(error)).toBeUndefined()
    }
  })
})

function catching(run: () => void): unknown {
  try {
    run()
  } catch (error) {
    return error
  }
  throw new Error('expected it to throw')
}
