import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs'
import path from 'node:path'
import { describe, expect, it } from 'vitest'

const ROOT = path.resolve(import.meta.dirname, '../..')

/** README.md and every Markdown page under docs/. */
function markdownFiles(): string[] {
  const found = ['README.md']
  const walk = (dir: string) => {
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const relative = path.join(dir, name)
      if (statSync(path.join(ROOT, relative)).isDirectory()) walk(relative)
      else if (name.endsWith('.md')) found.push(relative)
    }
  }
  walk('docs')
  return found
}

/** A page without its fenced blocks, which hold neither headings nor links. */
function withoutFences(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '')
}

/** The text a reader sees as Markdown: inline code holds no links either. */
function prose(text: string): string {
  return withoutFences(text).replace(/`[^`\n]*`/g, '')
}

/** The anchors GitHub gives a page's headings: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>()
  const result = new Set<string>()
  for (const [, heading] of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*#*$/gm)) {
    const slug = heading!
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const count = seen.get(slug) ?? 0
    seen.set(slug, count + 1)
    result.add(count === 0 ? slug : `${slug}-${count}`)
  }
  return result
}

/** Each relative link of a page: its target path (from the repository's root) and anchor. */
function relativeLinks(file: string): Array<{ link: string; target: string; anchor: string | undefined }> {
  const text = prose(readFileSync(path.join(ROOT, file), 'utf8'))
  const links = [...text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1]!)
  return links
    .filter((link) => !/^[a-z][a-z\d+.-]*:/i.test(link))
    .map((link) => {
      const [pathPart, anchor] = link.split('#', 2) as [string, string | undefined]
      const target = pathPart === '' ? file : path.normalize(path.join(path.dirname(file), decodeURIComponent(pathPart)))
      return { link, target, anchor }
    })
}

describe('the documentation', () => {
  it.each(markdownFiles())('%s: every relative link names a file that exists, and a heading in it', (file) => {
    const broken = relativeLinks(file).filter(({ target, anchor }) => {
      const full = path.join(ROOT, target)
      if (!existsSync(full)) return true
      if (anchor === undefined || !target.endsWith('.md')) return false
      return !anchors(readFileSync(full, 'utf8')).has(anchor)
    })
    expect(broken.map(({ link }) => link)).toEqual([])
  })
})
