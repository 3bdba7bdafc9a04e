import * as oauth from 'oauth4webapi'
import { expect } from 'vitest'
import type { CreatedAccount } from './herald.js'
import { call, managementToken } from './http.js'
import { CONSENT_URL, LOGIN_URL } from './sign-in.js'

export const DEVICE_GRANT = 'urn:ietf:params:oauth:grant-type:device_code'
/** The account's device pages, as Herald sees them: pages it sends browsers to and never fetches. */
export const DEVICE_VERIFICATION_URL = 'https://login.example/device'
export const DEVICE_DONE_URL = 'https://login.example/device-done'

/** A device (a TV, a CLI) as oauth4webapi drives it: it starts a device authorization and polls, one poll at a time. */
export interface DeviceClient {
  as: oauth.AuthorizationServer
  client: oauth.Client
  clientId: string
}

/** Points the account at its login, consent and device pages, and registers a public device client. */
export async function prepareDevice(account: CreatedAccount, client: Record<string, unknown> = {}, settings: Record<string, unknown> = {}): Promise<DeviceClient> {
  const token = await managementToken(account)
  const patched = await call(`${account.base}/settings`, 'PATCH', { token, json: { login_url: LOGIN_URL, consent_url: CONSENT_URL, device_verification_url: DEVICE_VERIFICATION_URL, device_done_url: DEVICE_DONE_URL, ...settings } })
  expect(patched.status, patched.text).toBe(200)
  const created = await call<{ client_id: string }>(`${account.base}/oauth/clients`, 'POST', {
    token,
    json: { client_name: 'Television', token_endpoint_auth_method: 'none', grant_types: [DEVICE_GRANT, 'refresh_token'], response_types: [], redirect_uris: [], scope: 'openid profile offline_access', ...client },
  })
  expect(created.status, created.text).toBe(201)
  return deviceClient(account, created.body.client_id)
}

/** The device of a public client already registered, with the account's metadata from its discovery document. */
export async function deviceClient(account: CreatedAccount, clientId: string): Promise<DeviceClient> {
  const issuer = new URL(account.issuer)
  const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }))
  return { as, client: { client_id: clientId }, clientId }
}

export async function startDevice(device: DeviceClient, scope = 'openid offline_access'): Promise<oauth.DeviceAuthorizationResponse> {
  const response = await oauth.deviceAuthorizationRequest(device.as, device.client, oauth.None(), { scope }, { [oauth.allowInsecureRequests]: true })
  return oauth.processDeviceAuthorizationResponse(device.as, device.client, response)
}

/** One poll of the token endpoint: the tokens, or the error code it answered. */
export async function poll(device: DeviceClient, deviceCode: string): Promise<oauth.TokenEndpointResponse | { error: string }> {
  const response = await oauth.deviceCodeGrantRequest(device.as, device.client, oauth.None(), deviceCode, { [oauth.allowInsecureRequests]: true })
  try {
    return await oauth.processDeviceCodeResponse(device.as, device.client, response)
  } catch (error) {
    if (error instanceof oauth.ResponseBodyError) return { error: error.error }
    throw error
  }
}
