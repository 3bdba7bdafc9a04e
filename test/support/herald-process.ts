import { type ChildProcess, execFile, spawn } from 'node:child_process'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { DatabaseConfig } from '../../src/platform/config.js'
import { eventually } from './receiver.js'

/** The built CLI (test/support/global-setup.ts builds it before any test runs). */
export const MAIN = path.join(fileURLToPath(new URL('../..', import.meta.url)), 'dist', 'main.js')

/** A finished process: its exit code and what it wrote on each stream. */
export interface Run {
  code: number | null
  stdout: string
  stderr: string
}

/** Runs the built CLI with exactly `env` (no inherited variables but PATH), in `cwd`, to its end. */
export function runHerald(args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return runProcess(process.execPath, [MAIN, ...args], env, cwd)
}

/** Runs `file` with exactly `env` (no inherited variables but PATH), in `cwd`; killed after 30 s. */
export function runProcess(file: string, args: string[], env: Record<string, string>, cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(file, args, { cwd, env: { PATH: process.env.PATH ?? '', ...env }, timeout: 30_000 }, (error, stdout, stderr) => {
      const code = error ? (typeof error.code === 'number' ? error.code : null) : 0
      resolve({ code, stdout, stderr })
    })
  })
}

/** The `DATABASE_URL` that opens `database` in a process of its own. */
export function databaseUrl(database: DatabaseConfig): string {
  return database.dialect === 'postgres' ? database.connectionString : `sqlite:${database.filename}`
}

/** A `herald` process and every line it wrote. */
export interface HeraldProcess {
  child: ChildProcess
  lines: string[]
}

/** `herald command` as its own process, in `cwd`; `env` is all the configuration it gets, besides PATH and HOST. */
export function spawnHerald(command: 'serve' | 'worker' | 'migrate' | readonly ['listen', ...string[]], env: Record<string, string>, cwd?: string): HeraldProcess {
  const child = spawn(process.execPath, [MAIN, ...(typeof command === 'string' ? [command] : command)], { cwd, env: { PATH: process.env.PATH ?? '', HOST: '127.0.0.1', ...env }, stdio: ['ignore', 'pipe', 'pipe'] })
  const lines: string[] = []
  const collect = (chunk: Buffer) => lines.push(...chunk.toString('utf8').split('\n').filter(Boolean))
  child.stdout?.on('data', collect)
  child.stderr?.on('data', collect)
  return { child, lines }
}

export function running(process: HeraldProcess): boolean {
  return process.child.exitCode === null && process.child.signalCode === null
}

/** Resolves once `origin/readyz` answers 200; fails early, with what it wrote, should the process end first. */
export async function ready(process: HeraldProcess, origin: string): Promise<void> {
  await eventually(
    async () => {
      if (!running(process)) throw new Error(`herald exited with ${process.child.exitCode ?? process.child.signalCode}:\n${process.lines.join('\n')}`)
      return (await fetch(`${origin}/readyz`).then((response) => response.status, () => 0)) === 200
    },
    20_000,
    `herald at ${origin} to be ready`,
  )
}

/** Resolves with its exit code once it has exited. */
export function exited(process: HeraldProcess): Promise<number | null> {
  if (!running(process)) return Promise.resolve(process.child.exitCode)
  return new Promise((resolve) => process.child.once('exit', (code) => resolve(code)))
}

/** SIGTERM, and resolves once it has exited. */
export async function stop(process: HeraldProcess | undefined): Promise<void> {
  if (!process || !running(process)) return
  const exited = new Promise((resolve) => process.child.once('exit', resolve))
  process.child.kill('SIGTERM')
  await exited
}
