/** OpenID Connect Core §5.4: the standard claims each scope asks for. */
export const SCOPE_CLAIMS: Readonly<Record<string, readonly string[]>> = {
  profile: ['name', 'family_name', 'given_name', 'middle_name', 'nickname', 'preferred_username', 'profile', 'picture', 'website', 'gender', 'birthdate', 'zoneinfo', 'locale', 'updated_at'],
  email: ['email', 'email_verified'],
  address: ['address'],
  phone: ['phone_number', 'phone_number_verified'],
}

const SCOPE_OF_CLAIM: ReadonlyMap<string, string> = new Map(Object.entries(SCOPE_CLAIMS).flatMap(([scope, claims]) => claims.map((claim) => [claim, scope] as const)))

/**
 * The consent's claims that a token of `scopes` carries: a standard claim only with its scope (§5.4), so that a token
 * issued for less than the consent granted (a narrower refresh, a scope the client lost) tells less. A claim of no
 * standard scope is the consent app's own, given for the whole grant, and goes with every token of it.
 */
export function claimsForScopes(claims: Readonly<Record<string, unknown>>, scopes: readonly string[]): Record<string, unknown> {
  const kept: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(claims)) {
    const scope = SCOPE_OF_CLAIM.get(name)
    if (scope === undefined || scopes.includes(scope)) kept[name] = value
  }
  return kept
}
