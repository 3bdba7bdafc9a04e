import type { Flow, FlowStore } from '../sign-in/flow-store.js'

/** A user's grant, as the tokens issued under it need it: a redeemed authorization flow. */
export type UserGrant = Flow & { subject: string; login: NonNullable<Flow['login']>; consent: NonNullable<Flow['consent']> }

export function isUserGrant(flow: Flow | undefined): flow is UserGrant {
  return flow !== undefined && flow.subject !== null && flow.login !== null && flow.consent !== null
}

/** The grants of users, read by the id their access tokens carry (`gid`). */
export class UserGrants {
  constructor(private readonly flows: FlowStore) {}

  /** The grant with this id, revoked or not (the token checks decide that), if it is one. */
  async byId(accountId: string, id: string): Promise<UserGrant | undefined> {
    const flow = await this.flows.byId(accountId, id, 'redeemed')
    return isUserGrant(flow) ? flow : undefined
  }
}
