import { readFileSync } from 'node:fs'
import { describe, expect, it } from 'vitest'
import { OAUTH_ERRORS } from '../../src/platform/http/oauth-errors.js'
import { PROBLEMS } from '../../src/platform/http/problems.js'

/** Rows of the markdown table under `heading`: `| \`code\` | status | … |` → [code, status]. */
function tableRows(markdown: string, heading: string): Array<[string, number]> {
  const section = markdown.split(/^## /m).find((part) => part.startsWith(heading))
  if (!section) throw new Error(`docs/errors.md has no section "${heading}"`)
  return [...section.matchAll(/^\| `([a-z_]+)` \| (\d{3}) \|/gm)].map((match) => [match[1] as string, Number(match[2])])
}

describe('docs/errors.md', () => {
  const markdown = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8')

  it('lists exactly the problem codes of the code, with their statuses', () => {
    const documented = tableRows(markdown, 'Management and operator API')
    expect(documented).toEqual(Object.entries(PROBLEMS).map(([code, { status }]) => [code, status]))
  })

  it('lists exactly the OAuth error codes of the code, with their statuses', () => {
    const documented = tableRows(markdown, 'OAuth endpoints')
    expect(documented).toEqual(Object.entries(OAUTH_ERRORS))
  })
})
