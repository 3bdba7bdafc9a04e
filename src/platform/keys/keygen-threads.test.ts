import { execFile } from 'node:child_process'
import { createPublicKey, sign, verify } from 'node:crypto'
import { readFileSync, readdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it, vi } from 'vitest'
import type { SigningAlg } from '../storage/schema.js'
import { KeygenThreads } from './keygen-threads.js'
import { importPrivateKey, isPairOf } from './material.js'

/** The built module, for a process of its own (the global setup builds dist/ before any test runs). */
const BUILT_MATERIAL = fileURLToPath(new URL('../../../dist/platform/keys/material.js', import.meta.url))

/** SCHED_IDLE's number in a task's stat (sched(7), linux/sched.h). */
const SCHED_IDLE = 5

/** The nice value and scheduling policy of each thread of this process by thread id, from /proc (Linux): fields 19 and 41 of a task's stat. */
function threadPriorities(): Map<number, { nice: number; policy: number }> {
  return new Map(
    readdirSync('/proc/self/task').map((tid) => {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8')
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      return [Number(tid), { nice: Number(fields[16]), policy: Number(fields[38]) }]
    }),
  )
}

describe('KeygenThreads', () => {
  it('makes key pairs of both algorithms whose private key signs what the public key verifies', async () => {
    const threads = new KeygenThreads(1, 60_000)
    const [ec, rsa] = await Promise.all([threads.generate('ES256'), threads.generate('RS256')])

    expect(ec.publicJwk).toMatchObject({ kty: 'EC', crv: 'P-256' })
    expect(rsa.publicJwk).toMatchObject({ kty: 'RSA', e: 'AQAB' })
    expect(createPublicKey({ key: rsa.publicJwk, format: 'jwk' }).asymmetricKeyDetails?.modulusLength).toBe(2048)
    for (const pair of [ec, rsa]) {
      expect(pair.privatePem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/)
      const privateKey = importPrivateKey(pair.privatePem)
      expect(isPairOf(privateKey, pair.publicJwk)).toBe(true)
      const signature = sign('sha256', Buffer.from('payload'), privateKey)
      expect(verify('sha256', Buffer.from('payload'), createPublicKey({ key: pair.publicJwk, format: 'jwk' }), signature)).toBe(true)
    }
    expect(isPairOf(importPrivateKey(ec.privatePem), rsa.publicJwk)).toBe(false)
  })

  it('answers every key asked of it when more are asked than it has threads, each a new pair', async () => {
    const threads = new KeygenThreads(2, 60_000)
    const pairs = await Promise.all(Array.from({ length: 6 }, () => threads.generate('ES256')))
    expect(new Set(pairs.map((pair) => pair.publicJwk.x)).size).toBe(6)
    const [first, second] = pairs
    if (!first || !second) throw new Error('six pairs were made')
    expect(isPairOf(importPrivateKey(first.privatePem), second.publicJwk)).toBe(false)
  })

  it('rejects a key the thread failed to make with its error, and goes on making keys', async () => {
    const threads = new KeygenThreads(1, 60_000)
    const failed = threads.generate('HS256' as SigningAlg)
    const next = threads.generate('ES256')
    await expect(failed).rejects.toThrow('no key generation for HS256')
    await expect(next).resolves.toMatchObject({ publicJwk: { kty: 'EC' } })
  })

  it.runIf(process.platform === 'linux')('makes keys on a thread at the lowest CPU priority, the rest of the process untouched', async () => {
    const before = threadPriorities()
    await new KeygenThreads(1, 60_000).generate('ES256')
    const after = threadPriorities()
    const lowered = [...after].filter(([tid, { nice }]) => nice === 19 && before.get(tid)?.nice !== 19)
    expect(lowered).toHaveLength(1)
    // Debian's util-linux, which every image has, brings chrt(1).
    expect(lowered[0]?.[1].policy).toBe(SCHED_IDLE)
    expect(after.get(process.pid)).toEqual(before.get(process.pid))
  })

  it.runIf(process.platform === 'linux')('ends a thread once it has been idle for its time, and starts another for the next key', async () => {
    const threads = new KeygenThreads(1, 0)
    const before = threadPriorities().size
    await threads.generate('ES256')
    await vi.waitFor(() => expect(threadPriorities().size).toBe(before), { timeout: 10_000 })
    await expect(threads.generate('ES256')).resolves.toMatchObject({ publicJwk: { kty: 'EC' } })
  })

  it('keeps a process alive while it owes a key, and lets it exit on its own once the key is made', async () => {
    // The script's last statement only asks for the key: the process lives on until the key is answered, then ends
    // although the thread would stay a minute for the next key.
    const script = `import { generateSigningKey } from ${JSON.stringify(BUILT_MATERIAL)}
generateSigningKey('key_child', 'RS256').then((key) => console.log(key.publicJwk.kty, key.publicJwk.kid))`
    const run = await new Promise<{ error: Error | null; stdout: string; stderr: string }>((resolve) =>
      execFile(process.execPath, ['--input-type=module', '-e', script], { timeout: 20_000 }, (error, stdout, stderr) => resolve({ error, stdout, stderr })),
    )
    expect(run).toEqual({ error: null, stdout: 'RSA key_child\n', stderr: '' })
  })
})
