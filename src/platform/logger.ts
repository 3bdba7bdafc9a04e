import pino, { type DestinationStream } from 'pino'
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
