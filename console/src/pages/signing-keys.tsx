import { useState } from 'preact/hooks'
import { api } from '../api.js'
import { Table } from '../list.js'
import { ErrorNote, Status, Time, useLoad } from '../ui.js'

// The account's signing keys with their lifecycle, and a routine rotation.

interface SigningKey {
  kid: string
  alg: string
  status: string
  signs_from: string
  retires_at: string | null
  published_until: string | null
}

export function SigningKeys() {
  const keys = useLoad('keys', () => api<{ data: SigningKey[] }>('GET', '/keys'))
  const [said, setSaid] = useState<string | undefined>()
  const [error, setError] = useState<unknown>()
  const rotate = async () => {
    setError(undefined)
    try {
      await api('POST', '/keys/rotate')
      setSaid('Rotated: the new keys are published now and sign once cached key sets have expired.')
      keys.reload()
    } catch (rotateError) {
      setError(rotateError)
    }
  }
  return (
    <>
      <div class="heading">
        <h2>Signing keys</h2>
        <button type="button" class="secondary" onClick={() => void rotate()}>
          Rotate keys
        </button>
      </div>
      {said && (
        <p class="ok" role="status">
          {said}
        </p>
      )}
      {error !== undefined && <ErrorNote error={error} />}
      {keys.error !== undefined && <ErrorNote error={keys.error} />}
      {keys.data && (
        <Table
          headings={['Key', 'Algorithm', 'Status', 'Signs from', 'Retires', 'Published until']}
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
            </tr>
          )}
        />
      )}
    </>
  )
}
