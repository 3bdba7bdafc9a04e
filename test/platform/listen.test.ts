import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { Webhook } from 'standardwebhooks'
import { freePort } from '../support/herald.js'
import { type HeraldProcess, exited, runHerald, spawnHerald, stop } from '../support/herald-process.js'
import { eventually } from '../support/receiver.js'

const SECRET = `whsec_${randomBytes(32).toString('base64')}`
const BODY = JSON.stringify({ type: 'invoice.paid', timestamp: '2026-11-28T00:00:00.000Z', data: { invoice: 42 } })

/** The headers a Standard Webhooks sender puts on `body`, signed by the reference library under `secret`. */
function signed(id: string, body: string, secret = SECRET, at = new Date()): Record<string, string> {
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(id, at, body),
  }
}

describe('herald listen', () => {
  let listener: HeraldProcess
  let url = ''

  beforeAll(async () => {
    const port = await freePort()
    url = `http://127.0.0.1:${port}/`
    // A configuration the server would refuse is none of the receiver's business.
    listener = spawnHerald(['listen', '--port', String(port), '--secret', SECRET], { DATABASE_URL: 'mysql://nowhere' })
    await eventually(() => listener.lines.some((line) => line.startsWith(`Listening on ${url}`)), 20_000, 'herald listen to listen')
  })

  afterAll(() => stop(listener))

  /** POSTs `body` and resolves with the status and the line the receiver printed for it. */
  async function deliver(id: string, headers: Record<string, string>, body = BODY): Promise<{ status: number; line: string }> {
    const response = await fetch(url, { method: 'POST', headers, body })
    const line = await eventually(() => listener.lines.find((printed) => printed.includes(id)), 10_000, `a line about ${id}`)
    return { status: response.status, line }
  }

  it('prints a delivery the secret verifies, and answers 204', async () => {
    const { status, line } = await deliver('msg_good', signed('msg_good', BODY))
    expect(status).toBe(204)
    expect(line).toBe('verified  msg_good  invoice.paid  {"invoice":42}')
  })

  it('answers 400 and says why to a delivery the secret does not verify', async () => {
    const other = `whsec_${randomBytes(32).toString('base64')}`
    const forged = await deliver('msg_forged', signed('msg_forged', BODY, other))
    expect(forged).toEqual({ status: 400, line: expect.stringMatching(/^rejected {2}msg_forged {2}No matching signature found$/) as unknown as string })

    const tampered = await deliver('msg_tampered', signed('msg_tampered', BODY), BODY.replace('42', '43'))
    expect(tampered.status).toBe(400)
    expect(tampered.line).toMatch(/^rejected {2}msg_tampered /)

    const stale = await deliver('msg_stale', signed('msg_stale', BODY, SECRET, new Date(Date.now() - 3600_000)))
    expect(stale.status).toBe(400)
    expect(stale.line).toMatch(/^rejected {2}msg_stale .*too old/)
    expect(listener.lines.filter((line) => line.startsWith('verified'))).toHaveLength(1)
  })

  it('answers 405 to anything but POST', async () => {
    const response = await fetch(url)
    expect(response.status).toBe(405)
    expect(response.headers.get('allow')).toBe('POST')
  })

  it('exits 0 on SIGINT', async () => {
    const port = await freePort()
    const second = spawnHerald(['listen', '--port', String(port), '--secret', SECRET], {})
    await eventually(() => second.lines.some((line) => line.startsWith('Listening on')), 20_000, 'the second listener')
    const code = exited(second)
    second.child.kill('SIGINT')
    expect(await code).toBe(0)
  })

  it('refuses a missing or malformed secret or port with exit 2, and a port in use with one line', async () => {
    for (const [args, problem] of [
      [['listen'], /--secret is required/],
      [['listen', '--secret', 'hunter2'], /--secret must be a signing secret/],
      [['listen', '--secret', SECRET, '--port', '70000'], /--port must be an integer from 1 to 65535/],
    ] as const) {
      const run = await runHerald([...args], {}, process.cwd())
      expect(run.code, args.join(' ')).toBe(2)
      expect(run.stderr).toMatch(problem)
      expect(run.stderr).toContain('Usage: herald listen --secret')
    }
    const taken = await runHerald(['listen', '--secret', SECRET, '--port', new URL(url).port], {}, process.cwd())
    expect(taken.code).toBe(1)
    expect(taken.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^herald: port \d+ on 127\.0\.0\.1 is already in use .*--port/)])
  })
})
