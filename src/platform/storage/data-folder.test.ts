import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createDataFolder } from './data-folder.js'

describe('createDataFolder', () => {
  let scratch = ''
  beforeAll(() => {
    scratch = mkdtempSync(path.join(tmpdir(), 'herald-data-folder-'))
  })
  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true })
  })

  it('creates the folder and its missing parents, and accepts one that exists', () => {
    const folder = path.join(scratch, 'a', 'b', 'c')
    createDataFolder(folder)
    expect(statSync(folder).isDirectory()).toBe(true)
    createDataFolder(folder)
    expect(statSync(folder).isDirectory()).toBe(true)
  })

  it('fails naming the folder that a file stands in the way of', () => {
    const file = path.join(scratch, 'file')
    writeFileSync(file, '')
    expect(() => createDataFolder(path.join(file, 'data'))).toThrow(expect.objectContaining({ code: 'ENOTDIR', path: path.join(file, 'data') }))
  })

  // Where Node's recursive mkdir never returns: mkdir answers ENOENT though the parent exists.
  it.runIf(process.platform === 'linux')('fails, rather than retrying forever, under /proc', () => {
    expect(() => createDataFolder('/proc/herald-nope/data')).toThrow(expect.objectContaining({ code: 'ENOENT', path: '/proc/herald-nope' }))
  })
})
