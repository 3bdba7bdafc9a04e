import { describe, expect, it } from 'vitest'
import { parseForm } from './form-body.js'

/** What URLSearchParams makes of a body, with repeated `resource` values as an array. */
function reference(body: string): Record<string, string | string[]> {
  const expected: Record<string, string | string[]> = {}
  for (const [name, value] of new URLSearchParams(body)) {
    const previous = expected[name]
    expected[name] = previous === undefined ? value : Array.isArray(previous) ? [...previous, value] : [previous, value]
  }
  return expected
}

describe('parseForm', () => {
  it.each([
    'grant_type=client_credentials&scope=orders:read',
    'grant_type=client_credentials&scope=a%20b+c',
    '&&grant_type=client_credentials&&',
    'grant_type&scope=',
    '=x&grant_type=a=b',
    'resource=https://a.example&resource=https://b.example&resource=c',
    'scope=%zz%41&x=%C3%A9%FF',
    'a;b=c&d=é',
    'subject_token_type=urn%3Aietf%3Aparams%3Aoauth%3Atoken-type%3Aaccess_token&x=%2B+%25',
    'name%3D=%26&%3D=%C3%A9%F0%9F%98%80',
    'x=%&y=%4',
    'x=%ED%A0%80&y=%EF%BB%BFa',
    'x=%C3',
    '',
  ])('reads %j as URLSearchParams does', (body) => {
    expect({ ...parseForm(body) }).toEqual(reference(body))
  })

  it('refuses a repeated parameter other than resource, encoded or not', () => {
    expect(() => parseForm('grant_type=a&grant_type=a')).toThrow('The parameter grant_type is repeated')
    expect(() => parseForm('scope=a&sc%6Fpe=b')).toThrow('The parameter scope is repeated')
  })
})
