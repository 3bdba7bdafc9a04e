import { expect, it } from 'vitest'
import { publicUrlForCommands, recordPublicUrl } from '../../src/platform/server-record.js'
import { forEachDialect, useHerald } from '../support/herald.js'

/** What `herald serve` records of itself, and what the CLI makes of it (test/platform/cli.test.ts runs both for real). */
forEachDialect((dialect) => {
  const h = useHerald(dialect, { worker: false })

  it('keeps the last server\'s public URL, which a command follows unless its own PUBLIC_URL is set', async () => {
    const { db } = h.current.herald.database
    const warnings: string[] = []
    const warn = (line: string) => warnings.push(line)
    const unset = { publicUrl: 'http://localhost:8080', publicUrlSet: false }
    expect(await publicUrlForCommands(db, unset, warn)).toBe('http://localhost:8080')

    await recordPublicUrl(db, 'http://localhost:8090', h.current.clock)
    await recordPublicUrl(db, 'https://auth.example.com', h.current.clock)
    expect(await db.selectFrom('herald_server').selectAll().execute()).toEqual([{ id: 1, public_url: 'https://auth.example.com', started_at: h.current.clock.now() }])
    expect(await publicUrlForCommands(db, unset, warn)).toBe('https://auth.example.com')
    expect(warnings).toEqual([])

    expect(await publicUrlForCommands(db, { publicUrl: 'https://auth.example.com', publicUrlSet: true }, warn)).toBe('https://auth.example.com')
    expect(warnings).toEqual([])
    expect(await publicUrlForCommands(db, { publicUrl: 'https://other.example.com', publicUrlSet: true }, warn)).toBe('https://other.example.com')
    expect(warnings).toEqual([expect.stringContaining('serves as https://auth.example.com')])
  })
})
