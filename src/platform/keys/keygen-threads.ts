import { Worker } from 'node:worker_threads'
import type { JWK } from 'jose'
import type { SigningAlg } from '../storage/schema.js'

/** A key pair as a keygen thread answers it: the public key as a JWK (no kid yet), the private key as PKCS#8 PEM. */
export interface KeyPairText {
  publicJwk: JWK
  privatePem: string
}

type Reply = { id: number; pair: KeyPairText } | { id: number; error: string }

/**
 * The thread's program, a module given as a data: URL rather than a file of its own, so that the same code runs from
 * `dist/` and from the TypeScript sources under test. Keys are made with the synchronous call on purpose: the
 * asynchronous one would hand the work to libuv's pool, whose threads keep their normal priority.
 */
const THREAD_SOURCE = `
import { execFileSync } from 'node:child_process'
import { createPublicKey, generateKeyPairSync } from 'node:crypto'
import { readlinkSync } from 'node:fs'
import { setPriority } from 'node:os'
import { parentPort } from 'node:worker_threads'
// On Linux, priority 0 names the calling thread only (setpriority(2), NOTES): this thread takes the CPU only when
// the event loop does not want it. Elsewhere it would lower the whole process, so it is left alone there. Then the
// thread asks for SCHED_IDLE (sched(7)), through chrt(1) and the thread's id in /proc/thread-self: a thread at nice
// 19 may still finish its time slice before a woken event loop runs, while one under SCHED_IDLE gives way at once.
// Either needs no privilege, but a sandbox may forbid it; keys made at normal priority beat no keys.
if (process.platform === 'linux') {
  try {
    setPriority(0, 19)
    execFileSync('chrt', ['--idle', '--pid', '0', readlinkSync('/proc/thread-self').split('/').pop()], { stdio: 'ignore' })
  } catch {}
}
// The pair comes encoded, from inside the call: no KeyObject of the call's own is exported afterwards. Node 20 can
// deadlock a thread that exports such a KeyObject: the export holds the key's lock while it allocates, the allocation
// may collect the finished call, and the call's destructor waits for that same lock. The JWK is read from a key
// object made afresh, whose lock is its own.
const PEM = { publicKeyEncoding: { type: 'spki', format: 'pem' }, privateKeyEncoding: { type: 'pkcs8', format: 'pem' } }
function generate(alg) {
  if (alg === 'ES256') return generateKeyPairSync('ec', { namedCurve: 'P-256', ...PEM })
  if (alg === 'RS256') return generateKeyPairSync('rsa', { modulusLength: 2048, ...PEM })
  throw new Error('no key generation for ' + alg)
}
parentPort.on('message', ({ id, alg }) => {
  let reply
  try {
    const { publicKey, privateKey } = generate(alg)
    reply = { id, pair: { publicJwk: createPublicKey(publicKey).export({ format: 'jwk' }), privatePem: privateKey } }
  } catch (error) {
    reply = { id, error: error instanceof Error ? error.message : String(error) }
  }
  parentPort.postMessage(reply)
})
`

interface Pending {
  resolve(pair: KeyPairText): void
  reject(error: Error): void
}

/**
 * One keygen thread and the keys it owes. It keeps the process alive only while it owes a key, and ends itself
 * once it has been idle for `idleMs`, so a process that made a key some time ago holds no thread for it. `onGone`
 * runs when it stops taking keys: before it is told to end, so that no key is asked of a thread on its way out.
 */
class KeygenThread {
  readonly #worker = new Worker(new URL(`data:text/javascript,${encodeURIComponent(THREAD_SOURCE)}`), { name: 'herald-keygen' })
  readonly #pending = new Map<number, Pending>()
  #nextId = 0
  #idleTimer: NodeJS.Timeout | undefined

  constructor(
    private readonly idleMs: number,
    private readonly onGone: () => void,
  ) {
    this.#worker.on('message', (reply: Reply) => this.#settle(reply))
    this.#worker.on('error', (error) => {
      onGone()
      this.#failAll(error)
    })
    this.#worker.on('exit', (code) => {
      clearTimeout(this.#idleTimer)
      this.#failAll(new Error(`The key generation thread exited (code ${code})`))
      onGone()
    })
  }

  /** Keys asked of this thread and not yet answered. */
  get owed(): number {
    return this.#pending.size
  }

  generate(alg: SigningAlg): Promise<KeyPairText> {
    const id = this.#nextId++
    return new Promise((resolve, reject) => {
      clearTimeout(this.#idleTimer)
      if (this.#pending.size === 0) this.#worker.ref()
      this.#pending.set(id, { resolve, reject })
      this.#worker.postMessage({ id, alg })
    })
  }

  #settle(reply: Reply): void {
    const pending = this.#pending.get(reply.id)
    if (!pending) return
    this.#pending.delete(reply.id)
    if ('pair' in reply) pending.resolve(reply.pair)
    else pending.reject(new Error(reply.error))
    if (this.#pending.size === 0) this.#idle()
  }

  #idle(): void {
    this.#worker.unref()
    this.#idleTimer = setTimeout(() => {
      this.onGone()
      void this.#worker.terminate()
    }, this.idleMs)
    this.#idleTimer.unref()
  }

  #failAll(error: Error): void {
    for (const pending of this.#pending.values()) pending.reject(error)
    this.#pending.clear()
  }
}

/**
 * Key pairs made on threads of their own at the lowest CPU priority. An RSA key takes tens to hundreds of
 * milliseconds of CPU; at normal priority, on a core it shares with the event loop, that time is taken from every
 * other request of the process. Up to `threads` keys are made at once; threads start when asked for a key.
 */
export class KeygenThreads {
  readonly #threads = new Set<KeygenThread>()

  constructor(
    private readonly threads: number,
    /** How long a thread stays after its last key, ready for the next one. */
    private readonly idleMs: number,
  ) {}

  generate(alg: SigningAlg): Promise<KeyPairText> {
    return this.#leastBusy().generate(alg)
  }

  /** An idle thread, else a new one if there is room, else the one that owes the fewest keys. */
  #leastBusy(): KeygenThread {
    let best: KeygenThread | undefined
    for (const thread of this.#threads) if (!best || thread.owed < best.owed) best = thread
    if (best && (best.owed === 0 || this.#threads.size >= this.threads)) return best
    const thread: KeygenThread = new KeygenThread(this.idleMs, () => void this.#threads.delete(thread))
    this.#threads.add(thread)
    return thread
  }
}
