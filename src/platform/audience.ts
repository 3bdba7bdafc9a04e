/**
 * Why `value` can't be an audience (a client's `audience` entry, an account's `default_audience`), or undefined when
 * it can: an absolute URI, as it becomes `aud`, without a fragment (RFC 8707 §2), and without spaces or control
 * characters, which no URI holds (RFC 3986 §2) though WHATWG URL parsing accepts some (it drops tabs and newlines).
 */
export function audienceProblem(value: string): string | undefined {
  if ([...value].some((char) => char <= ' ' || (char >= '\u007f' && char <= '\u009f'))) return 'must not contain spaces or control characters'
  if (value.includes('#')) return 'must not contain a fragment (RFC 8707 §2)'
  try {
    new URL(value)
  } catch {
    return 'must be an absolute URI'
  }
  return undefined
}
