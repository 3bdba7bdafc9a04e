import pino, { type Bindings, type ChildLoggerOptions, type DestinationStream } from 'pino'
import type { FastifyBaseLogger } from 'fastify'
import type { LogLevel } from './config.js'

/**
 * The process logger. Credentials must never reach a log line: request headers are not logged by default,
 * and these paths are redacted wherever a caller logs an object that happens to carry them.
 */
export function createLogger(level: LogLevel, destination?: DestinationStream): FastifyBaseLogger {
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
      ],
      censor: '[redacted]',
    },
    },
    destination,
  )
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
