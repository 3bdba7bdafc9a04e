// `npm start` builds only when a source is newer than the last build, so a built checkout starts at once.
// `node scripts/fresh-build.mjs` builds if stale; `--stamp` (the end of `npm run build`) records a build.
import { execFileSync } from 'node:child_process'
import { existsSync, readdirSync, statSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = fileURLToPath(new URL('..', import.meta.url))
const STAMP = path.join(ROOT, 'dist', '.build-stamp')
const INPUTS = ['src', 'console/src', 'console/index.html', 'console/vite.config.ts', 'console/tsconfig.json', 'tsconfig.json', 'tsconfig.build.json', 'package.json', 'package-lock.json']

/** The newest modification time of a file or of any file below a folder. */
function newest(entry) {
  const full = path.join(ROOT, entry)
  if (!existsSync(full)) return 0
  const stat = statSync(full)
  if (!stat.isDirectory()) return stat.mtimeMs
  return Math.max(0, ...readdirSync(full).map((name) => newest(path.join(entry, name))))
}

if (process.argv.includes('--stamp')) {
  writeFileSync(STAMP, `${new Date().toISOString()}\n`)
} else if (!existsSync(STAMP) || Math.max(...INPUTS.map(newest)) > statSync(STAMP).mtimeMs) {
  execFileSync('npm', ['run', 'build'], { cwd: ROOT, stdio: 'inherit' })
}
