import { connect } from 'node:net'

/** An answer read off the socket as bytes arrived: what a client below any HTTP library sees. */
export interface RawAnswer {
  status: number
  headers: Record<string, string>
  body: string
}

/** Writes `chunks` on one connection, running `between` before each but the first, and reads every answer until the server closes it. */
export async function exchange(origin: string, chunks: string[], between: () => Promise<unknown> = async () => {}): Promise<RawAnswer[]> {
  const { port } = new URL(origin)
  const socket = connect(Number(port), '127.0.0.1')
  let received = ''
  socket.setEncoding('latin1')
  socket.on('data', (data: string) => (received += data))
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()))
  await new Promise<void>((resolve) => socket.once('connect', () => resolve()))
  for (const [index, chunk] of chunks.entries()) {
    if (index > 0) await between()
    socket.write(chunk)
  }
  await closed
  return parseAnswers(received)
}

function parseAnswers(text: string): RawAnswer[] {
  const answers: RawAnswer[] = []
  let rest = text
  while (rest.startsWith('HTTP/1.1 ')) {
    const headEnd = rest.indexOf('\r\n\r\n')
    const [statusLine = '', ...lines] = rest.slice(0, headEnd).split('\r\n')
    const headers: Record<string, string> = {}
    for (const line of lines) headers[line.slice(0, line.indexOf(':')).toLowerCase()] = line.slice(line.indexOf(':') + 1).trim()
    const length = Number(headers['content-length'] ?? 0)
    answers.push({ status: Number(statusLine.split(' ')[1]), headers, body: rest.slice(headEnd + 4, headEnd + 4 + length) })
    rest = rest.slice(headEnd + 4 + length)
  }
  return answers
}
