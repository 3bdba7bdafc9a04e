import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream } from 'pino'
import pretty from 'pino-pretty'
import type { FastifyBaseLogger } from 'fastify'
import type { LogLevel } from './config.js'

/**
 * Where a process writes its log lines on `fd` (stdout or stderr): JSON lines, one per entry, for whatever collects
 * them, or pino-pretty's readable lines when that output is a terminal, where a person reads them.
 */
export function logDestination(fd: 1 | 2): DestinationStream {
  const output = fd === 1 ? process.stdout : process.stderr
  if (!output.isTTY) return pino.destination(fd)
  // Synchronous like pino.destination, so the last lines before an exit are written.
  return pretty({ destination: fd, sync: true, colorize: output.hasColors(), translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' })
}

/**
 * The process logger. Credentials must never reach a log line: request headers are not logged by default,
 * and these paths are redacted wherever a caller logs an object that happens to carry them.
 */
export function createLogger(level: LogLevel, destination: DestinationStream = logDestination(1)): FastifyBaseLogger {
  return pino(
    {
    level,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'headers.authorization',
        '*.client_secret',
        '*.secret',
        '*.private_key',
        '*.password',
        '*.token',
        '*.access_token',
        '*.refresh_token',
        '*.logout_token',
      ],
      censor: '[redacted]',
    },
    serializers: { req: requestSummary },
    },
    destination,
  )
}

/** What Fastify logs of a request ("incoming request"). */
interface LoggedRequest {
  method: string
  url: string
  host?: string
  ip?: string
  headers?: Record<string, string | string[] | undefined>
  socket?: { remotePort?: number }
}

/** Fastify's own summary of a request, but with the URL passed through redactedUrl. */
function requestSummary(request: LoggedRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactedUrl(request.url),
    version: request.headers?.['accept-version'],
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

const OAUTH_PATH = /(?:^|\/)oauth\//
/** A name that looks like a parameter's is kept; anything else might be a pasted credential. */
const PARAMETER_NAME = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * `url` with the values of its query redacted when it addresses an OAuth endpoint. Clients must not put credentials
 * in a URL (RFC 6749 §2.3.1), yet some do (`client_secret`, `code`, `refresh_token`,
 * `client_assertion`), and the query is logged at info with every request. Parameter names stay.
 */
export function redactedUrl(url: string): string {
  const start = url.indexOf('?')
  if (start === -1 || !addressesOAuth(url.slice(0, start))) return url
  const query = url
    .slice(start + 1)
    .split('&')
    .map((pair) => {
      const name = pair.split('=', 1)[0] ?? ''
      return PARAMETER_NAME.test(name) ? `${name}=[redacted]` : '[redacted]'
    })
  return `${url.slice(0, start)}?${query.join('&')}`
}

/**
 * Routing decodes the path, so `/%6Fauth/tokens` is the token endpoint too: the match is on the decoded path. One
 * that does not decode reaches no route, and is redacted all the same rather than trusted.
 */
function addressesOAuth(path: string): boolean {
  try {
    return OAUTH_PATH.test(decodeURIComponent(path))
  } catch {
    return true
  }
}

type Method = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace'

/**
 * Fastify's logger for each request (`request.log`, bound to its request id), made only once the request logs at
 * an enabled level. Making a pino child costs about a microsecond, since pino passes its bindings through the
 * redaction wildcard, and at most levels most requests log nothing.
 */
export function requestLoggerFactory(logger: FastifyBaseLogger, bindings: Bindings, options: ChildLoggerOptions): FastifyBaseLogger {
  return new RequestLogger(logger, bindings, options)
}

class RequestLogger implements FastifyBaseLogger {
  #child: FastifyBaseLogger | undefined

  constructor(
    private readonly parent: FastifyBaseLogger,
    private readonly bindings: Bindings,
    private readonly options: ChildLoggerOptions,
  ) {}

  get level(): string {
    return this.#child?.level ?? this.options.level ?? this.parent.level
  }

  set level(level: string) {
    this.#logger().level = level
  }

  fatal(...args: unknown[]): void {
    this.#log('fatal', args)
  }

  error(...args: unknown[]): void {
    this.#log('error', args)
  }

  warn(...args: unknown[]): void {
    this.#log('warn', args)
  }

  info(...args: unknown[]): void {
    this.#log('info', args)
  }

  debug(...args: unknown[]): void {
    this.#log('debug', args)
  }

  trace(...args: unknown[]): void {
    this.#log('trace', args)
  }

  silent(): void {}

  child(bindings: Bindings, options?: ChildLoggerOptions): FastifyBaseLogger {
    return this.#logger().child(bindings, options)
  }

  #log(method: Method, args: unknown[]): void {
    // pino.levels.values has no entry for 'silent' (nor for an unknown level): nothing is enabled then.
    const threshold = pino.levels.values[this.level] ?? Number.POSITIVE_INFINITY
    if ((pino.levels.values[method] ?? 0) < threshold) return
    const child = this.#logger()
    Reflect.apply(child[method], child, args)
  }

  #logger(): FastifyBaseLogger {
    this.#child ??= this.parent.child(this.bindings, this.options)
    return this.#child
  }
}
