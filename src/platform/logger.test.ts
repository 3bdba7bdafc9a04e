import { describe, expect, it, vi } from 'vitest'
import type { DestinationStream } from 'pino'
import type { LogLevel } from './config.js'
import { createLogger, redactedUrl, requestLoggerFactory } from './logger.js'

function capture(level: LogLevel) {
  const lines: Array<Record<string, unknown>> = []
  const destination: DestinationStream = { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) }
  const logger = createLogger(level, destination)
  const child = vi.spyOn(logger, 'child')
  return { lines, child, request: requestLoggerFactory(logger, { reqId: 'req-7' }, {}) }
}

describe('the per-request logger', () => {
  it('writes enabled lines bound to the request id, with secrets redacted', () => {
    const { lines, request } = capture('info')
    request.info({ body: { client_secret: 's3cret' } }, 'hello')
    request.error({ err: new Error('boom') }, 'unhandled error')
    expect(lines).toMatchObject([
      { level: 30, reqId: 'req-7', msg: 'hello', body: { client_secret: '[redacted]' } },
      { level: 50, reqId: 'req-7', msg: 'unhandled error', err: { message: 'boom' } },
    ])
  })

  it('makes no pino child while the request logs nothing at an enabled level', () => {
    const { lines, child, request } = capture('warn')
    request.info('incoming request')
    request.debug('detail')
    expect(child).not.toHaveBeenCalled()
    request.warn('careful')
    expect(child).toHaveBeenCalledTimes(1)
    request.error('failed')
    expect(child).toHaveBeenCalledTimes(1)
    expect(lines.map((line) => [line.level, line.reqId, line.msg])).toEqual([
      [40, 'req-7', 'careful'],
      [50, 'req-7', 'failed'],
    ])
  })

  it('logs nothing at level silent', () => {
    const { lines, child, request } = capture('silent')
    request.fatal('gone')
    expect(lines).toEqual([])
    expect(child).not.toHaveBeenCalled()
  })

  it("follows its own level once set, and the process logger's before", () => {
    const { lines, request } = capture('warn')
    expect(request.level).toBe('warn')
    request.level = 'debug'
    request.debug('now visible')
    expect(lines).toMatchObject([{ level: 20, reqId: 'req-7', msg: 'now visible' }])
  })
})

describe('redactedUrl', () => {
  it.each([
    ['/accounts/acct_1/oauth/tokens?client_secret=s3cret&code=abc', '/accounts/acct_1/oauth/tokens?client_secret=[redacted]&code=[redacted]'],
    ['/accounts/acct_1/oauth/introspect?token', '/accounts/acct_1/oauth/introspect?token=[redacted]'],
    ['/accounts/acct_1/oauth/revoke?eyJ%2Bsecret%3D=x&&', '/accounts/acct_1/oauth/revoke?[redacted]&[redacted]&[redacted]'],
    ['/accounts/acct_1/oauth/nowhere?refresh_token=r', '/accounts/acct_1/oauth/nowhere?refresh_token=[redacted]'],
    ['/accounts/acct_1/%6Fauth/tokens?client_secret=s', '/accounts/acct_1/%6Fauth/tokens?client_secret=[redacted]'],
    ['/accounts/acct_1/%zz/tokens?client_secret=s', '/accounts/acct_1/%zz/tokens?client_secret=[redacted]'],
  ])('redacts the query of an OAuth path, or of one that won\'t decode: %s', (url, redacted) => {
    expect(redactedUrl(url)).toBe(redacted)
  })

  it.each(['/accounts/acct_1/webhooks/deliveries?status=failed&limit=5', '/accounts/acct_1/oauth/tokens', '/accounts?cursor=abc', '/oauthx/tokens?a=b'])(
    'leaves other URLs as they are: %s',
    (url) => {
      expect(redactedUrl(url)).toBe(url)
    },
  )
})
