import type { Notifications, StatementSignal } from '../../platform/notifications/notifications.js'
import type { Tx } from '../../platform/storage/transaction.js'

/**
 * What there is to do: deliveries became due, events wait in the outbox for fan-out (the outbox sends this one),
 * or a recovery job or an endpoint's status sweep was queued. A worker does only the steps a signal names; its
 * fallback poll does them all.
 */
export type WorkKind = 'deliveries' | 'events' | 'jobs'

const KINDS: ReadonlySet<string> = new Set<WorkKind>(['deliveries', 'events', 'jobs'])

/**
 * "There is webhook work": sent by whatever makes work, heard by every worker process. PostgreSQL collapses the
 * identical signals of one transaction into one, and a worker that is already busy folds any number of them into
 * a single extra pass, so they cost nothing per row.
 */
export class WakeSignal {
  constructor(private readonly notifications: Notifications) {}

  send(tx: Tx, kind: WorkKind): Promise<void> {
    return this.notifications.send(tx, 'herald_webhooks', kind)
  }

  /** `send` for a write that is one autocommitting statement (see Notifications.inStatement). */
  inStatement(kind: WorkKind): StatementSignal {
    return this.notifications.inStatement('herald_webhooks', kind)
  }

  /** `kind` is undefined when anything may be waiting: signals sent while the listener was away are lost. */
  on(handler: (kind: WorkKind | undefined) => void): void {
    this.notifications.on('herald_webhooks', (payload) => handler(KINDS.has(payload) ? (payload as WorkKind) : undefined))
    this.notifications.onReconnect(() => handler(undefined))
  }
}
