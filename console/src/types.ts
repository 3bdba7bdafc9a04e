// The management API's shapes the console reads: the components of Herald's OpenAPI document, generated into
// api-types.ts by `npm run console:types`, under the names the pages use.
import type { components } from './api-types.js'

type Schemas = components['schemas']

export type Delivery = Schemas['Delivery']
export type Attempt = Schemas['Attempt']
export type Endpoint = Schemas['Endpoint']
export type Subscription = Schemas['Subscription']
/** Named apart from the DOM's Event. */
export type HeraldEvent = Schemas['Event']
/** The account's settings as `GET /settings` answers them: lifetimes in seconds, null URLs unset. */
export type Settings = Schemas['Settings']
export type EndpointStats = Schemas['EndpointStats']

export type DeliveryStatus = Delivery['status']
/** Every status, in the order the filters offer them; a status the API adds is missing here until listed. */
export const DELIVERY_STATUSES: DeliveryStatus[] = ['pending', 'succeeded', 'failed', 'held', 'cancelled']

/** One bucket of an endpoint's stats; the document describes it only inside EndpointStats. */
export type StatsBucket = EndpointStats['data'][number]
