// Start-up time: `npm start` from a built checkout, launched until /healthz answers 200, beside its floor, the built
// program alone (`node dist/main.js serve`), measured in the same run on the same fresh kind of database. The gap is
// npm's own start and the staleness check (scripts/fresh-build.mjs); the goal is /healthz within 3 s.
import { spawn } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { parseArgs } from 'node:util'
import { ROOT, formatMs, freePort } from './support.mjs'

export const USAGE = `Usage: npm run bench -- start [--runs N]

Starts Herald N times (default 5) each way on a new SQLite file in the development setup, and reports the time from
launch to the first 200 from /healthz: \`npm start\`, and \`node dist/main.js serve\` (its floor). Build first.`

const GOAL_MS = 3000

/** Milliseconds from spawning `command` to /healthz answering 200; then stops it (its whole process group). */
async function timeToHealthy(command, args) {
  const folder = mkdtempSync(path.join(tmpdir(), 'herald-start-'))
  const port = await freePort()
  const started = performance.now()
  const child = spawn(command, args, {
    cwd: ROOT,
    detached: true,
    stdio: 'ignore',
    env: { PATH: process.env.PATH, HOME: process.env.HOME, PORT: String(port), HOST: '127.0.0.1', DATABASE_URL: `sqlite:${path.join(folder, 'herald.db')}`, LOG_LEVEL: 'warn' },
  })
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`${command} ${args.join(' ')} exited with ${child.exitCode}`)
      const healthy = await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.status === 200, () => false)
      if (healthy) return performance.now() - started
      if (performance.now() - started > 30_000) throw new Error(`${command} ${args.join(' ')}: no /healthz within 30 s`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  } finally {
    const exited = new Promise((resolve) => child.once('exit', resolve))
    process.kill(-child.pid, 'SIGTERM')
    await exited
    rmSync(folder, { recursive: true, force: true })
  }
}

function summary(values) {
  const sorted = [...values].sort((a, b) => a - b)
  return { median: sorted[Math.floor(sorted.length / 2)], max: sorted.at(-1) }
}

export async function main(argv) {
  const { values } = parseArgs({ args: argv, options: { runs: { type: 'string', default: '5' } } })
  const runs = Number(values.runs)
  const npmStart = []
  const floor = []
  // Interleaved, so that whatever else the machine does weighs on both alike.
  for (let run = 0; run < runs; run++) {
    floor.push(await timeToHealthy(process.execPath, ['dist/main.js', 'serve']))
    npmStart.push(await timeToHealthy('npm', ['start', '--silent']))
  }
  const ours = summary(npmStart)
  const base = summary(floor)
  console.log(`launch to /healthz 200, ${runs} runs each (ms):`)
  console.log(`  npm start                  median ${formatMs(ours.median)}  max ${formatMs(ours.max)}`)
  console.log(`  node dist/main.js serve    median ${formatMs(base.median)}  max ${formatMs(base.max)}   (floor)`)
  console.log(`  npm start / floor (median) ${(ours.median / base.median).toFixed(2)}×; goal: max under ${GOAL_MS} ms: ${ours.max < GOAL_MS ? 'met' : 'NOT met'}`)
  return ours.max < GOAL_MS ? 0 : 1
}
