/** A value a warm cache has at hand, or the promise of one while it loads. */
export type Awaitable<T> = T | Promise<T>

/**
 * `next(value)`: at once when the value is at hand, after it resolves otherwise. The token endpoint's steps chain
 * through this so that, with warm caches, a request runs up to its grant without a promise or a microtask turn,
 * which cost measurably on that path (README, Benchmarks).
 */
export function andThen<T, R>(value: Awaitable<T>, next: (value: T) => Awaitable<R>): Awaitable<R> {
  return value instanceof Promise ? value.then(next) : next(value)
}
