import { randomBytes } from 'node:crypto'
import { describe, expect, it } from 'vitest'
import { ConfigError, DEFAULT_SQLITE_FILE, loadConfig } from './config.js'
import { cidrContains } from './outbound/addresses.js'

const SECRET = randomBytes(32).toString('base64')

/** The problems loadConfig reports for `env`; fails the test if it accepts it. */
function problemsOf(env: Record<string, string>): readonly string[] {
  try {
    loadConfig(env)
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError)
    return (error as ConfigError).problems
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`)
}

describe('loadConfig', () => {
  it('defaults to port 8080, http://localhost:8080 and SQLite under ./data', () => {
    const config = loadConfig({})
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      publicUrl: 'http://localhost:8080',
      database: { dialect: 'sqlite', filename: DEFAULT_SQLITE_FILE },
      secretKey: undefined,
      operatorToken: undefined,
      logLevel: 'info',
      production: false,
      development: true,
    })
    expect(DEFAULT_SQLITE_FILE).toMatch(/^data[/\\]herald\.db$/)
  })

  it('lets the development setup alone deliver to this machine over http, unless told otherwise', () => {
    const local = loadConfig({})
    expect(local.allowHttpOutbound).toBe(true)
    expect(local.webhookAllowedCidrs.map(({ family, prefixLength }) => [family, prefixLength])).toEqual([[4, 8], [6, 128]])
    expect(loadConfig({ HERALD_WEBHOOK_ALLOW_HTTP: 'false', HERALD_WEBHOOK_ALLOWED_CIDRS: '' })).toMatchObject({ development: true, allowHttpOutbound: false, webhookAllowedCidrs: [] })
    // A configured key, PostgreSQL or production is a setup someone means to run: today's strict defaults.
    for (const env of [
      { HERALD_SECRET_KEY: SECRET },
      { DATABASE_URL: 'postgres://db.example/herald', HERALD_SECRET_KEY: SECRET },
      { NODE_ENV: 'production', PUBLIC_URL: 'https://auth.example.com', HERALD_SECRET_KEY: SECRET },
    ]) {
      expect(loadConfig(env), JSON.stringify(env)).toMatchObject({ development: false, allowHttpOutbound: false, webhookAllowedCidrs: [] })
    }
  })

  it('treats empty and blank values as unset', () => {
    expect(loadConfig({ PORT: '', PUBLIC_URL: '  ', DATABASE_URL: '', LOG_LEVEL: ' ' })).toMatchObject({
      port: 8080,
      publicUrl: 'http://localhost:8080',
      database: { dialect: 'sqlite' },
      logLevel: 'info',
    })
  })

  it('derives the default PUBLIC_URL from PORT', () => {
    expect(loadConfig({ PORT: '9000' })).toMatchObject({ port: 9000, publicUrl: 'http://localhost:9000' })
  })

  it('strips trailing slashes from PUBLIC_URL, keeping a path prefix', () => {
    expect(loadConfig({ PUBLIC_URL: 'https://auth.example.com/' }).publicUrl).toBe('https://auth.example.com')
    expect(loadConfig({ PUBLIC_URL: 'https://auth.example.com' }).publicUrl).toBe('https://auth.example.com')
    expect(loadConfig({ PUBLIC_URL: 'https://example.com/herald//' }).publicUrl).toBe('https://example.com/herald')
  })

  it('refuses a PUBLIC_URL that is not an absolute http(s) URL, or carries a query or credentials', () => {
    expect(problemsOf({ PUBLIC_URL: 'auth.example.com' }).join('\n')).toMatch(/PUBLIC_URL/)
    expect(problemsOf({ PUBLIC_URL: 'ftp://auth.example.com' }).join('\n')).toMatch(/PUBLIC_URL/)
    expect(problemsOf({ PUBLIC_URL: 'https://auth.example.com/?x=1' }).join('\n')).toMatch(/PUBLIC_URL/)
    expect(problemsOf({ PUBLIC_URL: 'https://user:pw@auth.example.com' }).join('\n')).toMatch(/PUBLIC_URL/)
  })

  it('refuses an http PUBLIC_URL in production, and accepts https', () => {
    const problems = problemsOf({ NODE_ENV: 'production', PUBLIC_URL: 'http://auth.example.com', HERALD_SECRET_KEY: SECRET })
    expect(problems).toHaveLength(1)
    expect(problems[0]).toMatch(/PUBLIC_URL must use https/)
    // The default http://localhost origin is refused too: production must say where it is served.
    expect(problemsOf({ NODE_ENV: 'production', HERALD_SECRET_KEY: SECRET }).join('\n')).toMatch(/PUBLIC_URL/)
    expect(loadConfig({ NODE_ENV: 'production', PUBLIC_URL: 'https://auth.example.com', HERALD_SECRET_KEY: SECRET })).toMatchObject({
      production: true,
      publicUrl: 'https://auth.example.com',
    })
    expect(loadConfig({ PUBLIC_URL: 'http://auth.example.com' }).publicUrl).toBe('http://auth.example.com')
  })

  it('refuses an HERALD_OPERATOR_TOKEN shorter than 32 characters', () => {
    expect(problemsOf({ HERALD_OPERATOR_TOKEN: 'x'.repeat(31) })).toEqual([expect.stringMatching(/HERALD_OPERATOR_TOKEN/)])
    expect(problemsOf({ HERALD_OPERATOR_TOKEN: 'short' })).toHaveLength(1)
    expect(loadConfig({ HERALD_OPERATOR_TOKEN: 'x'.repeat(32) }).operatorToken).toBe('x'.repeat(32))
  })

  it('requires HERALD_SECRET_KEY with PostgreSQL and in production, not for development on SQLite', () => {
    expect(problemsOf({ DATABASE_URL: 'postgres://db.example/herald' })).toEqual([expect.stringMatching(/HERALD_SECRET_KEY is required/)])
    expect(problemsOf({ DATABASE_URL: 'postgresql://db.example/herald' })).toEqual([expect.stringMatching(/HERALD_SECRET_KEY/)])
    expect(problemsOf({ NODE_ENV: 'production', PUBLIC_URL: 'https://auth.example.com' })).toEqual([expect.stringMatching(/HERALD_SECRET_KEY/)])
    expect(loadConfig({ DATABASE_URL: 'postgres://db.example/herald', HERALD_SECRET_KEY: SECRET })).toMatchObject({
      database: { dialect: 'postgres', connectionString: 'postgres://db.example/herald' },
      secretKey: SECRET,
    })
    expect(loadConfig({}).secretKey).toBeUndefined()
  })

  it('refuses a HERALD_SECRET_KEY that is not 32 bytes, and accepts a rotation list of hex and base64 keys', () => {
    expect(problemsOf({ HERALD_SECRET_KEY: 'too-short' }).join('\n')).toMatch(/HERALD_SECRET_KEY must be 32 bytes/)
    expect(problemsOf({ HERALD_SECRET_KEY: `${SECRET},nope` }).join('\n')).toMatch(/HERALD_SECRET_KEY/)
    const list = `${randomBytes(32).toString('hex')}, ${SECRET}`
    expect(loadConfig({ HERALD_SECRET_KEY: list }).secretKey).toBe(list)
  })

  it('reads DATABASE_URL as PostgreSQL or a SQLite file', () => {
    expect(loadConfig({ DATABASE_URL: 'sqlite:/var/lib/herald/h.db' }).database).toEqual({ dialect: 'sqlite', filename: '/var/lib/herald/h.db' })
    expect(loadConfig({ DATABASE_URL: 'sqlite:///var/lib/herald/h.db' }).database).toEqual({ dialect: 'sqlite', filename: '/var/lib/herald/h.db' })
    expect(loadConfig({ DATABASE_URL: 'file:local.db' }).database).toEqual({ dialect: 'sqlite', filename: 'local.db' })
    expect(problemsOf({ DATABASE_URL: 'mysql://db.example/herald' })).toEqual([expect.stringMatching(/DATABASE_URL/)])
  })

  it('runs PostgreSQL statements prepared unless HERALD_PG_PREPARED_STATEMENTS=false', () => {
    const postgres = { DATABASE_URL: 'postgres://db.example/herald', HERALD_SECRET_KEY: SECRET }
    expect(loadConfig(postgres).database).toEqual({ dialect: 'postgres', connectionString: 'postgres://db.example/herald' })
    expect(loadConfig({ ...postgres, HERALD_PG_PREPARED_STATEMENTS: 'false' }).database).toMatchObject({ preparedStatements: false })
    expect(problemsOf({ ...postgres, HERALD_PG_PREPARED_STATEMENTS: 'no' })).toEqual([expect.stringMatching(/HERALD_PG_PREPARED_STATEMENTS/)])
  })

  it('accepts only ports from 0 to 65535 and a known LOG_LEVEL', () => {
    expect(loadConfig({ PORT: '0' }).port).toBe(0)
    expect(loadConfig({ PORT: '65535' }).port).toBe(65535)
    for (const port of ['65536', '-1', '80.5', 'abc', '1e3']) expect(problemsOf({ PORT: port }), port).toEqual([expect.stringMatching(/PORT/)])
    expect(loadConfig({}).workerPort).toBeUndefined()
    expect(loadConfig({ HERALD_WORKER_PORT: '9464' }).workerPort).toBe(9464)
    for (const port of ['65536', 'abc']) expect(problemsOf({ HERALD_WORKER_PORT: port }), port).toEqual([expect.stringMatching(/HERALD_WORKER_PORT/)])
    expect(loadConfig({ LOG_LEVEL: 'debug' }).logLevel).toBe('debug')
    expect(problemsOf({ LOG_LEVEL: 'loud' })).toEqual([expect.stringMatching(/LOG_LEVEL.*loud/)])
  })

  it('keeps the delivery worker settings within their ranges', () => {
    expect(loadConfig({})).toMatchObject({ webhookTimeoutMs: 15_000, webhookConcurrency: 512 })
    expect(loadConfig({ HERALD_WEBHOOK_TIMEOUT_MS: '1000', HERALD_WEBHOOK_CONCURRENCY: '1' })).toMatchObject({ webhookTimeoutMs: 1000, webhookConcurrency: 1 })
    expect(loadConfig({ HERALD_WEBHOOK_TIMEOUT_MS: '60000', HERALD_WEBHOOK_CONCURRENCY: '4096' })).toMatchObject({ webhookTimeoutMs: 60_000, webhookConcurrency: 4096 })
    for (const value of ['999', '60001', 'abc']) expect(problemsOf({ HERALD_WEBHOOK_TIMEOUT_MS: value }), value).toEqual([expect.stringMatching(/HERALD_WEBHOOK_TIMEOUT_MS/)])
    for (const value of ['0', '4097', '2.5']) expect(problemsOf({ HERALD_WEBHOOK_CONCURRENCY: value }), value).toEqual([expect.stringMatching(/HERALD_WEBHOOK_CONCURRENCY/)])
  })

  it('bounds every cache by HERALD_CACHE_SIZE, 10,000 entries unless set', () => {
    expect(loadConfig({}).cacheSize).toBe(10_000)
    expect(loadConfig({ HERALD_CACHE_SIZE: '100' }).cacheSize).toBe(100)
    expect(loadConfig({ HERALD_CACHE_SIZE: '1000000' }).cacheSize).toBe(1_000_000)
    for (const value of ['99', '1000001', '1e4', 'many']) expect(problemsOf({ HERALD_CACHE_SIZE: value }), value).toEqual([expect.stringMatching(/HERALD_CACHE_SIZE/)])
  })

  it('trusts X-Forwarded-For from this machine and private networks unless HERALD_TRUSTED_PROXIES says otherwise', () => {
    const trusted = (env: Record<string, string>, address: string) => loadConfig(env).trustedProxies.some((cidr) => cidrContains(cidr, address))
    for (const address of ['127.0.0.1', '::1', '10.1.2.3', '172.20.0.5', '192.168.1.1', 'fd00::1']) expect(trusted({}, address), address).toBe(true)
    for (const address of ['203.0.113.7', '8.8.8.8', '2001:db8::1']) expect(trusted({}, address), address).toBe(false)
    expect(trusted({ HERALD_TRUSTED_PROXIES: '' }, '127.0.0.1'), 'empty: none').toBe(false)
    expect(trusted({ HERALD_TRUSTED_PROXIES: '203.0.113.0/24' }, '203.0.113.7')).toBe(true)
    expect(problemsOf({ HERALD_TRUSTED_PROXIES: 'proxy.internal' })).toEqual([expect.stringMatching(/HERALD_TRUSTED_PROXIES/)])
  })

  it('reports every bad value at once, one line each', () => {
    const env = {
      PORT: 'abc',
      LOG_LEVEL: 'loud',
      DATABASE_URL: 'mysql://x',
      HERALD_OPERATOR_TOKEN: 'short',
      PUBLIC_URL: 'not a url',
    }
    const problems = problemsOf(env)
    expect(problems).toHaveLength(5)
    for (const name of Object.keys(env)) expect(problems.filter((problem) => problem.includes(name)), name).toHaveLength(1)

    let message = ''
    try {
      loadConfig(env)
    } catch (error) {
      message = (error as Error).message
    }
    const lines = message.split('\n')
    expect(lines[0]).toBe('Invalid configuration:')
    expect(lines.slice(1)).toEqual(problems.map((problem) => `  - ${problem}`))
  })
})
