// The API's shapes the console reads: the components and answers of Herald's OpenAPI document, generated into
// api-types.ts by `npm run console:types`, under the names the console uses.
import type { components, paths } from './api-types.js'

type Schemas = components['schemas']

/** The JSON body an operation of the document answers with `status`. */
type JsonAnswer<Operation, Status extends number> = Operation extends { responses: Record<Status, { content: { 'application/json': infer Body } }> } ? Body : never

export type Problem = Schemas['Problem']
/** A field the API refused, as a JSON pointer into the request (`/body/name`) and why. */
export type FieldError = NonNullable<Problem['errors']>[number]

export type Delivery = Schemas['Delivery']
export type DeliveryWithAttempts = Schemas['DeliveryWithAttempts']
export type Attempt = Schemas['Attempt']
export type Endpoint = Schemas['Endpoint']
export type EndpointStats = Schemas['EndpointStats']
export type RecoveryJob = Schemas['RecoveryJob']
export type Subscription = Schemas['Subscription']
/** Named apart from the DOM's Event. */
export type HeraldEvent = Schemas['Event']
export type EventType = JsonAnswer<paths['/accounts/{accountId}/webhooks/event-types']['get'], 200>['data'][number]
/** The account's settings as `GET /settings` answers them: lifetimes in seconds, null URLs unset. */
export type Settings = Schemas['Settings']
export type SigningKey = Schemas['Key']
export type Client = Schemas['Client']
export type RegistrationToken = Schemas['RegistrationToken']
export type Scope = Schemas['Scope']
/** A user's browser session; named apart from the console's own sign-in session. */
export type UserSession = Schemas['Session']
export type Consent = Schemas['Consent']

/** The token endpoint's answer to the console's client_credentials grant. */
export type TokenResponse = JsonAnswer<paths['/accounts/{accountId}/oauth/tokens']['post'], 200>
/** What a sign-in link is exchanged for. */
export type ConsoleToken = JsonAnswer<paths['/accounts/{accountId}/console-links/exchange']['post'], 200>

export type DeliveryStatus = Delivery['status']
/** Every status, in the order the filters offer them; a status the API adds is missing here until listed. */
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'held', 'cancelled']

/** One bucket of an endpoint's stats; the document describes it only inside EndpointStats. */
export type StatsBucket = EndpointStats['data'][number]
