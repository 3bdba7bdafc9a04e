import { type ServerResponse, STATUS_CODES } from 'node:http'
import type { Socket } from 'node:net'
import type { FastifyBaseLogger } from 'fastify'
import { ProblemError } from './problems.js'

/** What Node's HTTP server refuses before any request reaches Fastify, by the error code it reports. */
const PARSER_PROBLEMS: Readonly<Record<string, ProblemError>> = {
  HPE_HEADER_OVERFLOW: new ProblemError('headers_too_large', 'The request line and headers exceed the size limit'),
  ERR_HTTP_REQUEST_TIMEOUT: new ProblemError('request_timeout', 'The request did not arrive in full in time'),
  HPE_CHUNK_EXTENSIONS_OVERFLOW: new ProblemError('payload_too_large', 'The chunk extensions exceed the size limit'),
}
const MALFORMED = new ProblemError('bad_request', 'The request is not valid HTTP/1.1')

/**
 * Answers what Node's HTTP parser refuses (a malformed request line or header, headers over the size limit, a request
 * that took too long to arrive) with a problem document, as every other error is answered, then closes the
 * connection, which can't be read any further. Nothing is logged above `debug`: such requests come from scanners and
 * broken clients, not from Herald.
 */
export function answerClientError(log: FastifyBaseLogger, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const problem = (error.code !== undefined && PARSER_PROBLEMS[error.code]) || MALFORMED
  log.debug({ code: error.code }, 'refused a request the HTTP parser could not read')
  // As Node itself does: no answer once one to a request on this connection has begun, which it would corrupt.
  const answering = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage
  if (socket.writable && !answering?.headersSent) {
    const body = JSON.stringify(problem.toDocument())
    socket.write(
      `HTTP/1.1 ${problem.status} ${STATUS_CODES[problem.status]}\r\nContent-Type: application/problem+json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    )
  }
  socket.destroy()
}
