import { useState } from 'preact/hooks'
import { type Page, api, query } from '../api.js'
import { type Place, navigate } from '../router.js'
import type { Consent, UserSession } from '../types.js'
import { Table } from '../list.js'
import { ClientName } from '../names.js'
import { Empty, ErrorNote, OutcomeNote, Time, useLoad, useOutcome } from '../ui.js'

// A user's browser sessions and remembered consents, looked up by subject (`?subject=` in the URL); ending a session
// signs its browsers out, revoking a consent revokes the grants made under it.

export function SubjectPage(props: { place: Place }) {
  const subject = props.place.query.get('subject') ?? ''
  return (
    <section>
      <h1>Users</h1>
      <SubjectForm key={subject} subject={subject} />
      {subject ? <Subject subject={subject} /> : <Empty title="Look up a user by the subject your login app gave Herald." />}
    </section>
  )
}

function SubjectForm(props: { subject: string }) {
  const [subject, setSubject] = useState(props.subject)
  const submit = (event: Event) => {
    event.preventDefault()
    navigate(`/users${query({ subject: subject.trim() })}`)
  }
  return (
    <form class="filters" onSubmit={submit} aria-label="Look up a user">
      <label>
        Subject
        <input value={subject} onInput={(event) => setSubject(event.currentTarget.value)} required spellcheck={false} placeholder="user-1" />
      </label>
      <div class="filter-actions">
        <button type="submit">Look up</button>
      </div>
    </form>
  )
}

function Subject(props: { subject: string }) {
  const sessionsPath = `/oauth/sessions${query({ subject: props.subject, limit: 200 })}`
  const consentsPath = `/oauth/consents${query({ subject: props.subject, limit: 200 })}`
  const sessions = useLoad(sessionsPath, () => api<Page<UserSession>>('GET', sessionsPath))
  const consents = useLoad(consentsPath, () => api<Page<Consent>>('GET', consentsPath))
  const outcome = useOutcome()
  const act = async (path: string, done: string, reload: () => void) => {
    if (await outcome.run(() => api('DELETE', path), done)) reload()
  }
  const endSession = (id: string) => act(`/oauth/sessions${query({ subject: props.subject, session_id: id })}`, `Session ${id} ended.`, sessions.reload)
  const revoke = (clientId: string) => act(`/oauth/consents${query({ subject: props.subject, client_id: clientId })}`, `Consent to ${clientId} revoked, with its grants.`, consents.reload)
  return (
    <>
      <OutcomeNote of={outcome} />
      <h2>Sessions</h2>
      {sessions.error !== undefined && <ErrorNote error={sessions.error} />}
      {sessions.data && (
        <Table
          headings={['Session', 'Signed in', 'Methods', 'Expires', 'Actions']}
          rows={sessions.data.data}
          empty={<Empty title={`${props.subject} has no live session.`} />}
          row={(session) => (
            <tr data-session={session.id}>
              <td class="mono">{session.id}</td>
              <td>
                <Time value={session.auth_time} />
              </td>
              <td>{session.amr.join(', ') || <span class="muted">—</span>}</td>
              <td>
                <Time value={session.expires_at} />
              </td>
              <td>
                <button type="button" class="secondary" onClick={() => void endSession(session.id)} aria-label={`End session ${session.id}`}>
                  End session
                </button>
              </td>
            </tr>
          )}
        />
      )}
      <h2>Consents</h2>
      {consents.error !== undefined && <ErrorNote error={consents.error} />}
      {consents.data && (
        <Table
          headings={['Client', 'Scope', 'Given', 'Expires', 'Actions']}
          rows={consents.data.data}
          empty={<Empty title={`${props.subject} has no remembered consent.`} />}
          row={(consent) => (
            <tr data-consent={consent.client_id}>
              <td>
                <ClientName id={consent.client_id} />
              </td>
              <td class="mono small">{consent.scope.join(' ')}</td>
              <td>
                <Time value={consent.updated_at} />
              </td>
              <td>
                <Time value={consent.expires_at} empty="until revoked" />
              </td>
              <td>
                <button type="button" class="secondary" onClick={() => void revoke(consent.client_id)} aria-label={`Revoke consent to ${consent.client_id}`}>
                  Revoke consent
                </button>
              </td>
            </tr>
          )}
        />
      )}
    </>
  )
}
