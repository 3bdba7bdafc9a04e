import { existsSync, mkdirSync, statSync } from 'node:fs'
import path from 'node:path'

/**
 * Creates `folder` and any missing parents, one at a time. Node's `mkdir` with `recursive: true` never returns where
 * a parent exists yet mkdir answers ENOENT for its child all the same (a path under `/proc`): it takes the ENOENT
 * for a missing parent, finds the parent there, and retries forever. Here that path fails with the child's error.
 */
export function createDataFolder(folder: string): void {
  const missing: string[] = []
  for (let current = path.resolve(folder); !existsSync(current); current = path.dirname(current)) {
    missing.unshift(current)
    if (path.dirname(current) === current) break
  }
  for (const dir of missing) {
    try {
      mkdirSync(dir)
    } catch (error) {
      // Another process may have made it meanwhile (two servers starting on one file).
      if (!isFolder(dir)) throw error
    }
  }
}

function isFolder(dir: string): boolean {
  try {
    return statSync(dir).isDirectory()
  } catch {
    return false
  }
}
