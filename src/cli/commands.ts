import type { AccountView } from '../platform/accounts/accounts.js'
import type { HeraldCore } from '../herald.js'
import { transaction } from '../platform/storage/transaction.js'
import { longestSignedTokenLifetime } from '../platform/settings/settings.js'
import { type ParsedArgs, UsageError, requireFlag } from './args.js'

/** A CLI command that works on the accounts and prints its result. */
export type Command = (herald: HeraldCore, args: ParsedArgs, out: (line: string) => void) => Promise<void>

function printJsonOr(args: ParsedArgs, out: (line: string) => void, value: unknown, human: () => string[]): void {
  if (args.flags.json) out(JSON.stringify(value, null, 2))
  else for (const line of human()) out(line)
}

export const accountCommands: Record<string, Command> = {
  async create(herald, args, out) {
    const created = await herald.accounts.create(requireFlag(args, 'name').trim())
    printJsonOr(args, out, created, () => [
      `Created account ${created.account.id} (${created.account.name})`,
      `  issuer:        ${created.account.issuer}`,
      `  client_id:     ${created.admin_client.client_id}`,
      `  client_secret: ${created.admin_client.client_secret}`,
      'The secret is shown only now. `herald accounts reset-admin --account ID` issues a new one.',
    ])
  },
  async list(herald, args, out) {
    const accounts: AccountView[] = []
    let cursor: string | undefined
    do {
      const page = await herald.accounts.list(200, cursor)
      accounts.push(...page.data)
      cursor = page.next_cursor ?? undefined
    } while (cursor)
    printJsonOr(args, out, { data: accounts }, () => accounts.map((a) => `${a.id}  ${a.status.padEnd(8)}  ${a.name}`))
  },
  async disable(herald, args, out) {
    const account = await herald.accounts.setStatus(requireFlag(args, 'account'), 'disabled')
    printJsonOr(args, out, account, () => [`Disabled account ${account.id}`])
  },
  async enable(herald, args, out) {
    const account = await herald.accounts.setStatus(requireFlag(args, 'account'), 'active')
    printJsonOr(args, out, account, () => [`Enabled account ${account.id}`])
  },
  async 'reset-admin'(herald, args, out) {
    const credentials = await herald.accounts.resetAdmin(requireFlag(args, 'account'))
    printJsonOr(args, out, { admin_client: credentials }, () => [
      `New secret for management client ${credentials.client_id}:`,
      `  client_secret: ${credentials.client_secret}`,
      'Tokens issued under the old secret no longer work on the management API.',
    ])
  },
}

export const keyCommands: Record<string, Command> = {
  async rotate(herald, args, out) {
    const accountId = requireFlag(args, 'account')
    await herald.accounts.get(accountId)
    const settings = await herald.settings.read(herald.database.db, accountId)
    if (!settings) throw new UsageError(`account ${accountId} has no settings`)
    const fresh = await herald.keys.generate()
    const keys = await transaction(herald.database.db, (tx) => herald.keys.rotate(tx, accountId, longestSignedTokenLifetime(settings), fresh))
    printJsonOr(args, out, { data: keys }, () => keys.map((key) => `New ${key.alg} key ${key.kid}: published now, signs from ${key.signs_from}`))
  },
}

/** `herald console-link --account ID [--scope "…"]`: a single-use sign-in link to the account's console. */
export const consoleLink: Command = async (herald, args, out) => {
  const accountId = requireFlag(args, 'account')
  const link = await herald.consoleLinks.create(accountId, args.flags.scope?.split(' ').filter(Boolean))
  printJsonOr(args, out, link, () => [link.url, `Open it once, before ${link.expires_at}. It grants: ${link.scope}`])
}
