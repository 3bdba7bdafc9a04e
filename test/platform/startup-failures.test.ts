import { randomBytes } from 'node:crypto'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { createServer, type Server } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { createTestDatabase, POSTGRES_ADMIN_URL, type TestDatabase } from '../support/dialects.js'
import { freePort } from '../support/herald.js'
import { type Run, runHerald } from '../support/herald-process.js'

/** A stack trace's frame, as Node prints it. */
const STACK_FRAME = /^\s+at /m

/** A start-up failure as the issue asks: a non-zero exit, and one line on stderr that is not a stack. */
function expectOneLine(run: Run): string {
  expect(run.code, run.stderr).not.toBe(0)
  expect(run.code, run.stderr).not.toBeNull()
  const lines = run.stderr.split('\n').filter((line) => line.trim() !== '')
  expect(lines, run.stderr).toHaveLength(1)
  expect(run.stderr).not.toMatch(STACK_FRAME)
  return lines[0]!
}

/** Listens on `port` of 127.0.0.1 (0: any free one) and resolves with the port. */
function occupy(server: Server, port = 0): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject)
    server.listen(port, '127.0.0.1', () => resolve((server.address() as { port: number }).port))
  })
}

describe('herald serve: start-up failures are one line', () => {
  let cwd = ''
  const secretKey = randomBytes(32).toString('base64')
  const env = (extra: Record<string, string>) => ({ HOST: '127.0.0.1', PORT: '0', HERALD_SECRET_KEY: secretKey, ...extra })
  beforeAll(() => {
    cwd = mkdtempSync(path.join(tmpdir(), 'herald-startup-'))
  })
  afterAll(() => {
    if (cwd) rmSync(cwd, { recursive: true, force: true })
  })

  it('names the PostgreSQL host and port that refused the connection; LOG_LEVEL=debug adds the stack', async () => {
    const port = await freePort()
    const url = `postgres://postgres@127.0.0.1:${port}/herald`
    const line = expectOneLine(await runHerald(['serve'], env({ DATABASE_URL: url }), cwd))
    expect(line).toMatch(new RegExp(`^herald: can't reach PostgreSQL at 127\\.0\\.0\\.1:${port} \\(connection refused\\)`))
    expect(line).toContain('DATABASE_URL')

    const debug = await runHerald(['serve'], env({ DATABASE_URL: url, LOG_LEVEL: 'debug' }), cwd)
    expect(debug.code).toBe(1)
    expect(debug.stderr).toContain(line)
    expect(debug.stderr).toMatch(STACK_FRAME)
  })

  it('names the data folder that a regular file stands in the way of', async () => {
    const file = path.join(cwd, 'a-file')
    writeFileSync(file, '')
    const folder = path.join(file, 'data')
    const line = expectOneLine(await runHerald(['serve'], env({ DATABASE_URL: `sqlite:${path.join(folder, 'herald.db')}` }), cwd))
    expect(line).toBe(`herald: can't create the data folder ${folder} (not a directory): choose one Herald may create, with DATABASE_URL=sqlite:/path/to/herald.db`)
  })

  // Node's recursive mkdir never returns there: the process hung until killed.
  it.runIf(process.platform === 'linux')('names a data folder under /proc rather than hanging', async () => {
    const line = expectOneLine(await runHerald(['serve'], env({ DATABASE_URL: 'sqlite:/proc/herald-nope/herald.db' }), cwd))
    expect(line).toMatch(/^herald: can't create the data folder \/proc\/herald-nope \(/)
  })

  it('names the port in use, and the variable to change; --verbose adds the stack', async () => {
    const holder = createServer()
    try {
      const port = await occupy(holder)
      const serve = env({ DATABASE_URL: `sqlite:${path.join(cwd, 'in-use', 'herald.db')}`, PORT: String(port) })
      const line = expectOneLine(await runHerald(['serve'], serve, cwd))
      expect(line).toBe(`herald: port ${port} on 127.0.0.1 is already in use (another Herald?): stop what listens there, or set PORT to a free port`)

      const worker = expectOneLine(await runHerald(['worker'], { ...serve, HERALD_WORKER_PORT: String(port) }, cwd))
      expect(worker).toMatch(new RegExp(`^herald: port ${port} on 127\\.0\\.0\\.1 is already in use.*set HERALD_WORKER_PORT to a free port$`))

      const verbose = await runHerald(['serve', '--verbose'], serve, cwd)
      expect(verbose.code).toBe(1)
      expect(verbose.stderr).toContain(line)
      expect(verbose.stderr).toMatch(STACK_FRAME)
    } finally {
      await new Promise((resolve) => holder.close(resolve))
    }
  })

  describe.runIf(inject('dialects').includes('postgres'))('on PostgreSQL', () => {
    let database: TestDatabase | undefined
    afterAll(async () => {
      await database?.drop()
    })

    it('says the database does not exist, and how to create it', async () => {
      const name = `herald_absent_${randomBytes(4).toString('hex')}`
      const url = new URL(POSTGRES_ADMIN_URL)
      url.pathname = `/${name}`
      const line = expectOneLine(await runHerald(['serve'], env({ DATABASE_URL: url.toString() }), cwd))
      expect(line).toContain(`database "${name}" does not exist at ${url.hostname}:${url.port || 5432}`)
      expect(line).toMatch(new RegExp(`\`createdb .*${name}\``))
      expect(line).toContain(`CREATE DATABASE "${name}"`)
    })

    it('names the port in use on PostgreSQL too, after migrating', async () => {
      database = await createTestDatabase('postgres')
      if (database.config.dialect !== 'postgres') throw new Error('expected a PostgreSQL database')
      const holder = createServer()
      try {
        const port = await occupy(holder)
        const line = expectOneLine(await runHerald(['serve'], env({ DATABASE_URL: database.config.connectionString, PORT: String(port) }), cwd))
        expect(line).toMatch(new RegExp(`^herald: port ${port} on 127\\.0\\.0\\.1 is already in use`))
      } finally {
        await new Promise((resolve) => holder.close(resolve))
      }
    })
  })
})
