import { randomBytes } from 'node:crypto'
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import SQLite from 'better-sqlite3'
import { createRemoteJWKSet, jwtVerify } from 'jose'
import pg from 'pg'
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest'
import { SecretBox } from '../../src/platform/crypto/secret-box.js'
import { looksLikeId } from '../../src/platform/ids.js'
import { JWKS_MAX_AGE_SECONDS } from '../../src/platform/keys/policy.js'
import { migrationsFor } from '../../src/platform/storage/migrations/index.js'
import { COMMANDS } from '../../src/cli/usage.js'
import { createTestDatabase, type DialectName, type TestDatabase } from '../support/dialects.js'
import { freePort } from '../support/herald.js'
import { exited, type HeraldProcess, MAIN, ready, type Run, runHerald as herald, runProcess as execute, running, spawnHerald } from '../support/herald-process.js'
import { basicAuth, call } from '../support/http.js'

const PUBLIC_URL = 'https://herald.example.test'

function tempDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'herald-cli-'))
}

const USAGE = /Usage: herald <command>/

interface CreatedJson {
  account: { id: string; name: string; issuer: string; status: string }
  admin_client: { client_id: string; client_secret: string }
}

beforeAll(() => {
  // The global setup builds dist/ before any test runs.
  expect(existsSync(MAIN)).toBe(true)
})

const dialects: DialectName[] = inject('dialects').includes('postgres') ? ['sqlite', 'postgres'] : ['sqlite']

describe.each(dialects)('herald CLI on %s', (dialect) => {
  // Made in hooks, not while collecting, so a filtered or skipped run leaves no directory behind.
  let cwd = ''
  const secretKey = randomBytes(32).toString('base64')
  let database: TestDatabase | undefined
  let env: Record<string, string>

  beforeAll(async () => {
    cwd = tempDir()
    let url: string
    if (dialect === 'sqlite') {
      url = `sqlite:${path.join(cwd, 'db', 'herald.db')}`
    } else {
      database = await createTestDatabase('postgres')
      if (database.config.dialect !== 'postgres') throw new Error('expected a PostgreSQL database')
      url = database.config.connectionString
    }
    // A trailing slash on PUBLIC_URL must not reach the issuer.
    env = { DATABASE_URL: url, HERALD_SECRET_KEY: secretKey, PUBLIC_URL: `${PUBLIC_URL}/` }
  })

  afterAll(async () => {
    await database?.drop()
    if (cwd) rmSync(cwd, { recursive: true, force: true })
  })

  let created: CreatedJson

  it('migrate applies the migrations, then reports the database up to date', async () => {
    const first = await herald(['migrate'], env, cwd)
    expect(first, first.stderr).toMatchObject({ code: 0 })
    expect(first.stdout.trim()).toBe(`Applied ${Object.keys(migrationsFor('sqlite')).join(', ')}`)
    const second = await herald(['migrate'], env, cwd)
    expect(second).toMatchObject({ code: 0 })
    expect(second.stdout.trim()).toBe('The database is up to date')
  })

  it('accounts create --json prints the account and its management credentials as JSON', async () => {
    const run = await herald(['accounts', 'create', '--name', 'acme', '--json'], env, cwd)
    expect(run.code, run.stderr).toBe(0)
    created = JSON.parse(run.stdout) as CreatedJson
    expect(Object.keys(created).sort()).toEqual(['account', 'admin_client'])
    expect(created.account).toMatchObject({ name: 'acme', issuer: `${PUBLIC_URL}/accounts/${created.account.id}` })
    expect(looksLikeId('acct', created.account.id)).toBe(true)
    expect(Object.keys(created.admin_client).sort()).toEqual(['client_id', 'client_secret'])
    expect(looksLikeId('cli', created.admin_client.client_id)).toBe(true)
    expect(created.admin_client.client_secret.length).toBeGreaterThanOrEqual(32)
  })

  it('accounts create without --json prints the credentials for people, secret included once', async () => {
    const run = await herald(['accounts', 'create', '--name', 'people'], env, cwd)
    expect(run.code, run.stderr).toBe(0)
    expect(run.stdout).toMatch(/^Created account acct_\w+ \(people\)/)
    expect(run.stdout).toMatch(/client_secret: \S{32,}/)
  })

  it('accounts list --json lists the account', async () => {
    const run = await herald(['accounts', 'list', '--json'], env, cwd)
    expect(run.code, run.stderr).toBe(0)
    const { data } = JSON.parse(run.stdout) as { data: Array<{ id: string; name: string; status: string; issuer: string }> }
    expect(data.find((account) => account.id === created.account.id)).toMatchObject({ name: 'acme', status: 'active', issuer: created.account.issuer })
    expect(data.map((account) => account.name).sort()).toEqual(['acme', 'people'])
  })

  it('accounts disable, then enable, change the account status', async () => {
    const statusOf = async () => {
      const run = await herald(['accounts', 'list', '--json'], env, cwd)
      return (JSON.parse(run.stdout) as { data: Array<{ id: string; status: string }> }).data.find((account) => account.id === created.account.id)?.status
    }
    const disabled = await herald(['accounts', 'disable', '--account', created.account.id], env, cwd)
    expect(disabled.code, disabled.stderr).toBe(0)
    expect(disabled.stdout).toContain(created.account.id)
    expect(await statusOf()).toBe('disabled')

    const enabled = await herald(['accounts', 'enable', '--account', created.account.id], env, cwd)
    expect(enabled.code, enabled.stderr).toBe(0)
    expect(await statusOf()).toBe('active')
  })

  it('accounts disable of an unknown account fails, naming it', async () => {
    const run = await herald(['accounts', 'disable', '--account', 'acct_00000000000000000000000000'], env, cwd)
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('acct_00000000000000000000000000')
  })

  it('accounts reset-admin --json issues a different secret for the same management client', async () => {
    const run = await herald(['accounts', 'reset-admin', '--account', created.account.id, '--json'], env, cwd)
    expect(run.code, run.stderr).toBe(0)
    const { admin_client } = JSON.parse(run.stdout) as Pick<CreatedJson, 'admin_client'>
    expect(admin_client.client_id).toBe(created.admin_client.client_id)
    expect(admin_client.client_secret).not.toBe(created.admin_client.client_secret)
    expect(admin_client.client_secret.length).toBeGreaterThanOrEqual(32)
    created = { ...created, admin_client }
  })

  it('keys rotate prints the new keys, one per algorithm, signing after the JWKS max-age', async () => {
    const before = Date.now()
    const run = await herald(['keys', 'rotate', '--account', created.account.id], env, cwd)
    const after = Date.now()
    expect(run.code, run.stderr).toBe(0)
    const lines = run.stdout.trim().split('\n')
    expect(lines).toHaveLength(2)
    const algs = lines.map((line) => /^New (ES256|RS256) key (key_\w+): published now, signs from (\S+)$/.exec(line))
    expect(algs.map((match) => match?.[1]).sort()).toEqual(['ES256', 'RS256'])
    for (const match of algs) {
      const signsFrom = Date.parse(match?.[3] ?? '')
      expect(signsFrom).toBeGreaterThanOrEqual(before + JWKS_MAX_AGE_SECONDS * 1000)
      expect(signsFrom).toBeLessThanOrEqual(after + JWKS_MAX_AGE_SECONDS * 1000)
    }

    const json = await herald(['keys', 'rotate', '--account', created.account.id, '--json'], env, cwd)
    expect(json.code, json.stderr).toBe(0)
    const { data } = JSON.parse(json.stdout) as { data: Array<{ kid: string; alg: string; status: string }> }
    expect(data.map((key) => `${key.alg}:${key.status}`).sort()).toEqual(['ES256:upcoming', 'RS256:upcoming'])
  })

  it('console-link prints a single-use sign-in link to the account\'s console, its code kept only as a digest', async () => {
    const run = await herald(['console-link', '--account', created.account.id, '--scope', 'herald:webhooks:read'], env, cwd)
    expect(run.code, run.stderr).toBe(0)
    const [url, note] = run.stdout.trim().split('\n')
    expect(url).toMatch(`${PUBLIC_URL}/console/#account=${created.account.id}&link=`)
    expect(note).toMatch(/It grants: herald:webhooks:read$/)
    const code = new URLSearchParams(new URL(url!).hash.slice(1)).get('link')!
    expect(code.length).toBeGreaterThanOrEqual(43)
    const json = await herald(['console-link', '--account', created.account.id, '--json'], env, cwd)
    expect(json.code, json.stderr).toBe(0)
    expect(JSON.parse(json.stdout)).toMatchObject({ url: expect.stringContaining('/console/#'), scope: 'herald:webhooks:read herald:webhooks:write herald:events:publish' })
    const unknown = await herald(['console-link', '--account', 'acct_00000000000000000000000000'], env, cwd)
    expect(unknown.code).toBe(1)
    expect(unknown.stderr).toContain('acct_00000000000000000000000000')
  })

  it('keys rotate of an unknown account fails', async () => {
    const run = await herald(['keys', 'rotate', '--account', 'acct_00000000000000000000000000'], env, cwd)
    expect(run.code).not.toBe(0)
    expect(run.stderr).toContain('acct_00000000000000000000000000')
  })

  it('an unknown command exits 2 with the usage on stderr', async () => {
    for (const [args, problem] of [
      [['frobnicate'], /unknown command: frobnicate/],
      [['accounts', 'frobnicate'], /accounts takes one of: create, list, disable, enable, reset-admin/],
      [['accounts'], /accounts takes one of: create/],
      [['accounts', 'list', 'extra'], /unexpected "extra"/],
    ] as const) {
      const run = await herald([...args], env, cwd)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toMatch(problem)
      expect(run.stderr).toMatch(/Usage: herald /)
      expect(run.stdout).toBe('')
    }
  })

  it("a flag the command doesn't take exits 2 naming it, with that command's usage", async () => {
    const run = await herald(['accounts', 'list', '--name', 'acme'], env, cwd)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('herald accounts list takes no --name')
    expect(run.stderr).toContain('Usage: herald accounts list [--json]')
  })

  it('a missing required flag exits 2 naming it, with the usage on stderr', async () => {
    for (const [args, flag] of [
      [['accounts', 'create'], '--name'],
      [['accounts', 'create', '--name', '  '], '--name'],
      [['accounts', 'disable'], '--account'],
      [['keys', 'rotate'], '--account'],
    ] as const) {
      const run = await herald([...args], env, cwd)
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toContain(`${flag} is required`)
      expect(run.stderr).toContain(`Usage: herald ${args[0]} ${args[1]} --`)
    }
    // Nothing was created by the refused command.
    const list = await herald(['accounts', 'list', '--json'], env, cwd)
    expect((JSON.parse(list.stdout) as { data: unknown[] }).data).toHaveLength(2)
  })

  it('--help prints the usage and exits 0; COMMAND --help, that command\'s flags', async () => {
    const run = await herald(['--help'], env, cwd)
    expect(run.code).toBe(0)
    expect(run.stdout).toMatch(USAGE)
    for (const name of Object.keys(COMMANDS)) expect(run.stdout, name).toContain(`  ${name} `)

    // `serve --help` must print, not serve: the run would not end.
    const runs = await Promise.all(Object.keys(COMMANDS).map((name) => herald([...name.split(' '), '--help'], env, cwd)))
    for (const [index, [name, usage]] of Object.entries(COMMANDS).entries()) {
      const own = runs[index]!
      expect(own.code, name).toBe(0)
      expect(own.stdout, name).toContain(`Usage: herald ${usage.synopsis}`)
      for (const flag of Object.keys(usage.flags)) expect(own.stdout, name).toMatch(new RegExp(`^  --${flag} +\\S`, 'm'))
    }
    expect(runs[Object.keys(COMMANDS).indexOf('accounts create')]?.stdout).toMatch(/^ {2}--json +print the result as JSON$/m)
  })

  // Only PostgreSQL has a listening connection to look for; the command is held in its transaction meanwhile.
  if (dialect === 'postgres') {
    it('runs a command without a server\'s background work: no LISTEN connection while it runs', async () => {
      // Two connections: pg_stat_activity, read inside a transaction, keeps showing what it showed first.
      const holder = new pg.Client({ connectionString: env.DATABASE_URL })
      const observer = new pg.Client({ connectionString: env.DATABASE_URL })
      await Promise.all([holder.connect(), observer.connect()])
      try {
        await holder.query('begin')
        await holder.query('select 1 from accounts where id = $1 for update', [created.account.id])
        const running = herald(['accounts', 'disable', '--account', created.account.id], env, cwd)
        let exited = false
        void running.then(() => (exited = true))
        const deadline = Date.now() + 20_000
        for (;;) {
          const { rows } = await observer.query<{ n: number }>("select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'")
          if (rows[0]?.n) break
          if (exited || Date.now() > deadline) throw new Error(`the command never waited for the account's row lock: ${JSON.stringify(await running)}`)
          await new Promise((resolve) => setTimeout(resolve, 10))
        }
        const { rows: listening } = await observer.query<{ query: string }>(
          "select query from pg_stat_activity where datname = current_database() and query ilike 'listen %'",
        )
        expect(listening).toEqual([])
        await holder.query('commit')
        const run = await running
        expect(run.code, run.stderr).toBe(0)
      } finally {
        await Promise.all([holder.end(), observer.end()])
      }
    })
  }
})

describe('herald CLI configuration', () => {
  let cwd = ''
  beforeAll(() => {
    cwd = tempDir()
  })
  afterAll(() => {
    if (cwd) rmSync(cwd, { recursive: true, force: true })
  })

  it('exits 2 listing every bad value, one per line', async () => {
    for (const args of [['accounts', 'list'], ['migrate'], ['serve']]) {
      const run = await herald(args, { PORT: 'abc', LOG_LEVEL: 'loud', DATABASE_URL: 'mysql://x' }, cwd)
      expect(run.code, args.join(' ')).toBe(2)
      const lines = run.stderr.trim().split('\n')
      const portLine = lines.findIndex((line) => /PORT/.test(line) && line.includes('abc'))
      const levelLine = lines.findIndex((line) => /LOG_LEVEL/.test(line) && line.includes('loud'))
      const urlLine = lines.findIndex((line) => /DATABASE_URL/.test(line) && line.includes('mysql'))
      expect([portLine, levelLine, urlLine].every((index) => index >= 0)).toBe(true)
      expect(new Set([portLine, levelLine, urlLine]).size).toBe(3)
      expect(run.stdout).toBe('')
    }
    // Nothing was written: the bad configuration was refused before any database was opened.
    expect(existsSync(path.join(cwd, 'data'))).toBe(false)
  })

  it('exits 2 naming HERALD_SECRET_KEY when PostgreSQL is configured without it', async () => {
    const run = await herald(['accounts', 'list'], { DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/herald_cli_absent' }, cwd)
    expect(run.code).toBe(2)
    expect(run.stderr).toContain('HERALD_SECRET_KEY')
    expect(run.stdout).toBe('')
  })

  describe('on SQLite without HERALD_SECRET_KEY', () => {
    let dir = ''
    let dbFile = ''
    let keyFile = ''
    let env: Record<string, string> = {}
    let first: Run
    afterAll(() => {
      if (dir) rmSync(dir, { recursive: true, force: true })
    })

    beforeAll(async () => {
      dir = tempDir()
      dbFile = path.join(dir, 'nested', 'herald.db')
      keyFile = path.join(dir, 'nested', 'secret.key')
      env = { DATABASE_URL: `sqlite:${dbFile}` }
      first = await herald(['accounts', 'create', '--name', 'dev', '--json'], env, dir)
    })

    it('generates secret.key next to the database file, readable by its owner only, with a warning', async () => {
      expect(first.code, first.stderr).toBe(0)
      expect(existsSync(keyFile)).toBe(true)
      expect(statSync(keyFile).mode & 0o777).toBe(0o600)
      expect(Buffer.from(readFileSync(keyFile, 'utf8').trim(), 'base64')).toHaveLength(32)
      expect(existsSync(path.join(dir, 'data'))).toBe(false)
      expect(`${first.stdout}\n${first.stderr}`).toMatch(/HERALD_SECRET_KEY is not set/)
    })

    it('seals the account keys with the generated key, and reuses it on the next run without a new warning', async () => {
      const keyText = readFileSync(keyFile, 'utf8').trim()
      const second = await herald(['accounts', 'list', '--json'], env, dir)
      expect(second.code, second.stderr).toBe(0)
      expect(readFileSync(keyFile, 'utf8').trim()).toBe(keyText)
      expect(`${second.stdout}\n${second.stderr}`).not.toMatch(/HERALD_SECRET_KEY/)

      const box = SecretBox.fromSecretKeyText(keyText)
      const connection = new SQLite(dbFile, { readonly: true })
      try {
        const rows = connection.prepare('select id, account_id, private_key from signing_keys').all() as Array<{ id: string; account_id: string; private_key: string }>
        expect(rows).toHaveLength(2)
        for (const row of rows) expect(box.open(row.private_key, `signing_keys:${row.account_id}:${row.id}`)).toContain('-----BEGIN PRIVATE KEY-----')
      } finally {
        connection.close()
      }
    })

    it('writes readable log lines, not JSON, when they go to a terminal', async () => {
      const terminalDir = tempDir()
      try {
        // script(1) runs the command on a pseudo-terminal and copies what it writes there to its own stdout.
        const command = `'${process.execPath}' '${MAIN}' accounts list`
        const run = await execute('script', ['-qec', command, '/dev/null'], { DATABASE_URL: `sqlite:${path.join(terminalDir, 'herald.db')}` }, terminalDir)
        expect(run.code, run.stderr).toBe(0)
        expect(run.stdout).toMatch(/WARN.*HERALD_SECRET_KEY is not set/)
        expect(run.stdout).not.toContain('"level"')
      } finally {
        rmSync(terminalDir, { recursive: true, force: true })
      }
    })

    it('keeps --json output parseable: the warning goes to stderr, not stdout', () => {
      const parsed = JSON.parse(first.stdout) as CreatedJson
      expect(parsed.account.name).toBe('dev')
      expect(first.stderr).toMatch(/HERALD_SECRET_KEY is not set/)
    })
  })
})

describe('herald serve', () => {
  let dir = ''
  let serve: HeraldProcess | undefined
  let env: Record<string, string>
  let origin: string

  beforeAll(() => {
    dir = tempDir()
  })

  afterAll(async () => {
    if (serve && running(serve)) {
      serve.child.kill('SIGKILL')
      await exited(serve)
    }
    if (dir) rmSync(dir, { recursive: true, force: true })
  })

  async function token(account: CreatedJson) {
    return call<{ access_token: string; token_type: string }>(`${origin}/accounts/${account.account.id}/oauth/tokens`, 'POST', {
      headers: { authorization: basicAuth(account.admin_client.client_id, account.admin_client.client_secret) },
      form: { grant_type: 'client_credentials' },
    })
  }

  it('serves on SQLite, issues tokens to accounts the CLI creates, and exits 0 on SIGTERM', async () => {
    const port = await freePort()
    origin = `http://127.0.0.1:${port}`
    env = {
      DATABASE_URL: `sqlite:${path.join(dir, 'herald.db')}`,
      HERALD_SECRET_KEY: randomBytes(32).toString('base64'),
      PUBLIC_URL: origin,
      PORT: String(port),
      HOST: '127.0.0.1',
    }
    const before = await herald(['accounts', 'create', '--name', 'before', '--json'], env, dir)
    expect(before.code, before.stderr).toBe(0)
    const early = JSON.parse(before.stdout) as CreatedJson

    const proc = spawnHerald('serve', env)
    serve = proc
    await ready(proc, origin)
    expect((await call(`${origin}/healthz`, 'GET')).status).toBe(200)

    // An account created by the CLI before the server started.
    const first = await token(early)
    expect(first.status, first.text).toBe(200)
    const jwks = createRemoteJWKSet(new URL(`${early.account.issuer}/.well-known/jwks.json`))
    const { payload } = await jwtVerify(first.body.access_token, jwks, { issuer: early.account.issuer, audience: early.account.issuer, typ: 'at+jwt' })
    expect(payload.client_id).toBe(early.admin_client.client_id)

    // And one created by the CLI on the same file while the server runs.
    const during = await herald(['accounts', 'create', '--name', 'during', '--json'], env, dir)
    expect(during.code, during.stderr).toBe(0)
    const late = JSON.parse(during.stdout) as CreatedJson
    const second = await token(late)
    expect(second.status, second.text).toBe(200)
    await jwtVerify(second.body.access_token, createRemoteJWKSet(new URL(`${late.account.issuer}/.well-known/jwks.json`)), {
      issuer: late.account.issuer,
      audience: late.account.issuer,
    })

    const stopAt = Date.now()
    const code = exited(proc)
    proc.child.kill('SIGTERM')
    // A process the signal killed has no exit code: 0 means it shut down by itself.
    const result = await Promise.race([code, new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), 10_000))])
    expect(result, proc.lines.join('\n')).toBe(0)
    expect(Date.now() - stopAt).toBeLessThan(10_000)
  }, 60_000)

  it("prints under the public URL the server recorded, unless PUBLIC_URL is set here, which wins with a warning", async () => {
    const { PUBLIC_URL: _served, PORT: _port, ...elsewhere } = env
    const follows = await herald(['accounts', 'create', '--name', 'follows', '--json'], elsewhere, dir)
    expect(follows.code, follows.stderr).toBe(0)
    expect((JSON.parse(follows.stdout) as CreatedJson).account.issuer).toMatch(new RegExp(`^${origin}/accounts/acct_`))
    expect(follows.stderr).toBe('')

    const own = await herald(['accounts', 'create', '--name', 'own', '--json'], { ...elsewhere, PUBLIC_URL: PUBLIC_URL }, dir)
    expect(own.code, own.stderr).toBe(0)
    expect((JSON.parse(own.stdout) as CreatedJson).account.issuer).toMatch(new RegExp(`^${PUBLIC_URL}/accounts/acct_`))
    expect(own.stderr).toContain(`PUBLIC_URL here is ${PUBLIC_URL}, but the server on this database serves as ${origin}`)
  })
})
