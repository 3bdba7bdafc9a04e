import { describe, expect, it } from 'vitest'
import { boundHeapGrowth } from './heap-growth.js'

describe('boundHeapGrowth', () => {
  it("bounds V8's heap growth unless Node was started with a growth of the operator's own", () => {
    expect(boundHeapGrowth(['--enable-source-maps'])).toBe(true)
    expect(boundHeapGrowth(['--heap-growing-percent=80'])).toBe(false)
    expect(boundHeapGrowth(['--heap_growing_percent', '80'])).toBe(false)
  })
})
