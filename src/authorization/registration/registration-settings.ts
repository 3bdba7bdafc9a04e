import { Type } from 'typebox'
import { GRANT_TYPES } from '../clients/client-metadata.js'

export const REGISTRATION_MODES = ['disabled', 'initial_access_token', 'open'] as const

/** The account's registration settings as the settings API shows and takes them (see SettingsFields). */
export const RegistrationSettingsFields = {
  registration: Type.Enum([...REGISTRATION_MODES], {
    description: 'Dynamic client registration (RFC 7591) at `{issuer}/oauth/register`: `disabled`, with an initial access token from `POST /oauth/registration-tokens`, or `open` to anyone (rate-limited per address)',
  }),
  registration_scope: Type.String({
    maxLength: 4096,
    pattern: '^[\\x21\\x23-\\x5b\\x5d-\\x7e]+( [\\x21\\x23-\\x5b\\x5d-\\x7e]+)*$|^$',
    description: 'Space-separated: the most a registered client may be allowed; herald: scopes never',
  }),
  registration_grant_types: Type.Array(Type.Enum([...GRANT_TYPES]), {
    uniqueItems: true,
    description: 'The grant types a registered client may use; client_credentials never in open mode',
  }),
  registration_max_clients: Type.Integer({ minimum: 0, maximum: 1_000_000, description: 'How many registered clients the account may hold at once' }),
  registration_prune_after_days: Type.Union([Type.Integer({ minimum: 1, maximum: 3650 }), Type.Null()], {
    description: 'Registered clients that got no token for this many days are deleted; null keeps them',
  }),
  registration_rate_limit: Type.Integer({ minimum: 1, maximum: 10_000, description: 'Open registration: registrations per source address and hour, counted in each Herald process' }),
}
