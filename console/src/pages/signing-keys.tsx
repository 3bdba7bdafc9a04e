import { useEffect, useRef, useState } from 'preact/hooks'
import { ApiError, SessionEnded, api } from '../api.js'
import { Table } from '../list.js'
import { endSession, sessionKeyId } from '../session.js'
import type { SigningKey } from '../types.js'
import { ErrorNote, OutcomeNote, Status, Time, useLoad, useOutcome } from '../ui.js'

// The account's signing keys with their lifecycle; a routine rotation, and the revocation of a compromised key.

/** A key still in the key set can be revoked; a retired one has left it and signs nothing, a revoked one already is. */
const revocable = (key: SigningKey) => key.status !== 'retired' && key.status !== 'revoked'

export function SigningKeys() {
  const keys = useLoad('keys', () => api<{ data: SigningKey[] }>('GET', '/keys'))
  const outcome = useOutcome()
  const [confirming, setConfirming] = useState<SigningKey | undefined>()
  /** Calls the API, then says `done` and reads the keys again; a refusal is said in the API's words after `refused`. */
  const act = async (call: () => Promise<unknown>, done: string, refused: string) => {
    const worded = () => call().catch((error: unknown) => Promise.reject(error instanceof ApiError ? new Error(`${refused}: ${error.message}`) : error))
    if (await outcome.run(worded, done)) keys.reload()
  }
  const rotate = () => act(() => api('POST', '/keys/rotate'), 'Rotated: the new keys are published now and sign once cached key sets have expired.', "Can't rotate the keys")
  const revoke = (key: SigningKey) => {
    setConfirming(undefined)
    const revoked = `Key ${key.kid} revoked: it has left the key set and signs nothing more.`
    const call = async () => {
      await api('POST', `/keys/${encodeURIComponent(key.kid)}/revoke`)
      // The console's own token no longer verifies: rather than a bare 401 on the next request, say why.
      if (key.kid === sessionKeyId()) {
        endSession(`${revoked} It had signed this console's token: sign in again for a token of a key that signs now.`)
        throw new SessionEnded()
      }
    }
    return act(call, revoked, `Can't revoke ${key.kid}`)
  }
  return (
    <>
      <div class="heading">
        <h2>Signing keys</h2>
        <button type="button" class="secondary" onClick={() => void rotate()}>
          Rotate keys
        </button>
      </div>
      <OutcomeNote of={outcome} />
      {confirming && <ConfirmRevoke key={confirming.kid} signingKey={confirming} onRevoke={() => void revoke(confirming)} onKeep={() => setConfirming(undefined)} />}
      {keys.error !== undefined && <ErrorNote error={keys.error} />}
      {keys.data && (
        <Table
          headings={['Key', 'Algorithm', 'Status', 'Signs from', 'Retires', 'Published until', 'Revocation']}
          rows={keys.data.data}
          row={(key) => (
            <tr data-key={key.kid}>
              <td class="mono">{key.kid}</td>
              <td>{key.alg}</td>
              <td>
                <Status value={key.status} />
              </td>
              <td>
                <Time value={key.signs_from} />
              </td>
              <td>
                <Time value={key.retires_at} />
              </td>
              <td>
                <Time value={key.published_until} />
              </td>
              <td>
                {revocable(key) && (
                  <button type="button" class="secondary" aria-label={`Revoke ${key.kid}`} onClick={() => setConfirming(key)}>
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          )}
        />
      )}
    </>
  )
}

/** The confirm step before a revocation: says what it does, with the focus on keeping the key. */
function ConfirmRevoke(props: { signingKey: SigningKey; onRevoke(): void; onKeep(): void }) {
  const keep = useRef<HTMLButtonElement>(null)
  useEffect(() => keep.current?.focus(), [])
  const { kid, alg } = props.signingKey
  return (
    <div class="card danger" data-confirm-revoke={kid}>
      <p role="alert">
        Revoking <span class="mono">{kid}</span> takes it out of the key set at once: tokens it signed no longer verify once a verifier fetches the key set again, and it
        signs nothing more. If it is the {alg} key signing now, the upcoming one (or a new one) signs from now on. This can't be undone.
        {kid === sessionKeyId() && " It signed this console's own token, so revoking it signs you out."}
      </p>
      <div class="actions">
        <button type="button" class="destructive" onClick={props.onRevoke}>
          Revoke for good
        </button>
        <button type="button" class="secondary" ref={keep} onClick={props.onKeep}>
          Keep it
        </button>
      </div>
    </div>
  )
}
