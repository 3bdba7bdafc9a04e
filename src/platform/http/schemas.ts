import { type TSchema, Type } from 'typebox'
import { DEFAULT_PAGE_SIZE, MAX_PAGE_SIZE } from '../pagination.js'

/** RFC 9457 problem document, as every management and operator error is answered. */
export const ProblemSchema = Type.Object({
  type: Type.String(),
  title: Type.String(),
  status: Type.Integer(),
  code: Type.String({ description: 'Stable machine-readable code; see docs/errors.md' }),
  detail: Type.Optional(Type.String()),
  errors: Type.Optional(Type.Array(Type.Object({ pointer: Type.String(), message: Type.String() }))),
})

export const PageQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, default: DEFAULT_PAGE_SIZE }),
  cursor: Type.Optional(Type.String({ maxLength: 512 })),
})

/** A page of a list, as every list route answers it. */
export function PageOf<T extends TSchema>(item: T) {
  return Type.Object({ data: Type.Array(item), next_cursor: Type.Union([Type.String(), Type.Null()], { description: 'Pass as cursor for the next page; null on the last' }) })
}
