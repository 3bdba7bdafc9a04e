import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify'
import type { Awaitable } from '../cache/awaitable.js'

/**
 * A route's hook list with `hook` appended. Hooks attached to the routes that need them, rather than to the
 * whole plugin, cost the other routes nothing per request.
 */
export function appendHook<H>(existing: H | H[] | undefined, hook: H): H[] {
  if (existing === undefined) return [hook]
  return Array.isArray(existing) ? [...existing, hook] : [existing, hook]
}

export type HookStep = (request: FastifyRequest, reply: FastifyReply) => Awaitable<unknown>

/**
 * `step` as a callback-style hook: one that answers without a promise (from a warm cache, see andThen) then
 * costs the request no promise either, as an async hook always would. A throw or a rejection fails the request.
 */
export function awaitableHook(step: HookStep): (request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction) => void {
  return (request, reply, done) => {
    let result: unknown
    try {
      result = step(request, reply)
    } catch (error) {
      done(error as Error)
      return
    }
    if (result instanceof Promise) result.then(() => done(), done)
    else done()
  }
}
