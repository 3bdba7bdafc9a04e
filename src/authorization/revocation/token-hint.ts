import { type Static, Type } from 'typebox'
import { ClientCredentialFields } from '../token/token-request.js'

/**
 * The parameters RFC 7009 §2.1 defines for revocation, which RFC 7662 §2.1 reuses for introspection: the token
 * and an optional hint of its type, plus the client's credentials when it sends them in the body. Unknown
 * parameters are ignored (RFC 6749 §3.1); repeated ones were refused by the form parser.
 */
export const TokenHintBody = Type.Object(
  {
    token: Type.String({ minLength: 1, description: 'The token, as the client received it' }),
    token_type_hint: Type.Optional(
      Type.String({ description: '`access_token` or `refresh_token`. Herald looks the token up by its content and ignores the hint, as RFC 7009 §2.1 allows' }),
    ),
    ...ClientCredentialFields,
  },
  { additionalProperties: true },
)
export type TokenHintBody = Static<typeof TokenHintBody>
