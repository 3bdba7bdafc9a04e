import { OPERATOR_TOKEN, type CreatedAccount, type TestHerald } from './herald.js'

export interface ApiResponse<T = Record<string, unknown>> {
  status: number
  headers: Headers
  body: T
  text: string
}

export interface RequestOptions {
  token?: string
  json?: unknown
  form?: Record<string, string | string[]>
  body?: string
  headers?: Record<string, string>
  /** `manual` answers a redirect rather than following it. */
  redirect?: 'follow' | 'manual'
}

/** One real HTTP request to Herald; the body is parsed when it is JSON. */
export async function call<T = Record<string, unknown>>(url: string, method: string, options: RequestOptions = {}): Promise<ApiResponse<T>> {
  const headers: Record<string, string> = { ...options.headers }
  let body: string | undefined = options.body
  if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`
  if (options.json !== undefined) {
    headers['content-type'] ??= 'application/json'
    body = JSON.stringify(options.json)
  }
  if (options.form !== undefined) {
    headers['content-type'] ??= 'application/x-www-form-urlencoded'
    const params = new URLSearchParams()
    for (const [name, value] of Object.entries(options.form)) {
      for (const item of Array.isArray(value) ? value : [value]) params.append(name, item)
    }
    body = params.toString()
  }
  const response = await fetch(url, { method, headers, body, redirect: options.redirect ?? 'follow' })
  const text = await response.text()
  let parsed: unknown = text
  if (/json/.test(response.headers.get('content-type') ?? '') && text) parsed = JSON.parse(text)
  return { status: response.status, headers: response.headers, body: parsed as T, text }
}

export function basicAuth(clientId: string, secret: string): string {
  const encode = (value: string) => encodeURIComponent(value).replace(/%20/g, '+')
  return `Basic ${Buffer.from(`${encode(clientId)}:${encode(secret)}`).toString('base64')}`
}

/** Creates an account through the operator API, as an operator would. */
export async function createAccount(h: Pick<TestHerald, 'origin'>, name = 'acme'): Promise<CreatedAccount> {
  const response = await call<{ account: { id: string; name: string; issuer: string }; admin_client: { client_id: string; client_secret: string } }>(
    `${h.origin}/accounts`,
    'POST',
    { token: OPERATOR_TOKEN, json: { name } },
  )
  if (response.status !== 201) throw new Error(`account creation failed: ${response.status} ${response.text}`)
  const { account, admin_client } = response.body
  return {
    id: account.id,
    name: account.name,
    issuer: account.issuer,
    base: `${h.origin}/accounts/${account.id}`,
    clientId: admin_client.client_id,
    clientSecret: admin_client.client_secret,
  }
}

/** A management token from the account's own token endpoint, by client_credentials. */
export async function managementToken(account: CreatedAccount, scope?: string): Promise<string> {
  const response = await call<{ access_token: string }>(`${account.base}/oauth/tokens`, 'POST', {
    headers: { authorization: basicAuth(account.clientId, account.clientSecret) },
    form: { grant_type: 'client_credentials', ...(scope !== undefined && { scope }) },
  })
  if (response.status !== 200) throw new Error(`token request failed: ${response.status} ${response.text}`)
  return response.body.access_token
}
