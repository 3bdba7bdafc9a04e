import { type ChildProcess, spawn } from 'node:child_process'
import { eventually } from './receiver.js'

/**
 * One bash, fed code blocks one at a time as a person pastes them into a terminal: variables and background jobs
 * carry over from block to block, and the first failing command ends it (`set -eo pipefail`).
 */
export class ShellSession {
  readonly #bash: ChildProcess
  #output = ''
  #blocks = 0

  constructor(cwd: string, env: Record<string, string>) {
    // Its own process group, so that closing it also ends the jobs it left in the background.
    this.#bash = spawn('bash', ['--noprofile', '--norc'], { cwd, env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] })
    const collect = (chunk: Buffer) => (this.#output += chunk.toString('utf8'))
    this.#bash.stdout?.on('data', collect)
    this.#bash.stderr?.on('data', collect)
    this.#bash.stdin?.write('set -eo pipefail\n')
  }

  /** Everything the session and its jobs have written so far, both streams. */
  get output(): string {
    return this.#output
  }

  /** Runs `block` and resolves with what was written meanwhile, once it has finished; fails if the shell ended. */
  async run(block: string, timeoutMs = 30_000): Promise<string> {
    const marker = `__block_${++this.#blocks}_done__`
    const from = this.#output.length
    this.#bash.stdin?.write(`${block}\nprintf '\\n%s\\n' ${marker}\n`)
    await this.waitFor(marker, timeoutMs)
    return this.#output.slice(from, this.#output.indexOf(marker, from))
  }

  /** Resolves once the output holds `text`. */
  async waitFor(text: string, timeoutMs = 30_000): Promise<void> {
    try {
      await eventually(
        () => {
          if (this.#bash.exitCode !== null) throw new Error(`the shell ended with ${this.#bash.exitCode}`)
          return this.#output.includes(text)
        },
        timeoutMs,
        `"${text}" in the shell's output`,
      )
    } catch (error) {
      throw new Error(`${(error as Error).message}; it wrote:\n${this.#output}`)
    }
  }

  /** Ends the shell and every job it started. */
  close(): void {
    if (this.#bash.pid === undefined || this.#bash.exitCode !== null) return
    try {
      process.kill(-this.#bash.pid, 'SIGTERM')
    } catch {
      // Already gone.
    }
  }
}
