/**
 * A route's hook list with `hook` appended. Hooks attached to the routes that need them, rather than to the
 * whole plugin, cost the other routes nothing per request.
 */
export function appendHook<H>(existing: H | H[] | undefined, hook: H): H[] {
  if (existing === undefined) return [hook]
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook]
}
