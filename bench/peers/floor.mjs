// The floor for token issuance: a bare node:http handler doing only what issuing this token can't avoid —
// read the form body, check the Basic credentials (SHA-256, constant time), build the RFC 9068 claims and sign
// them ES256 with node:crypto, answer JSON. No framework, no validation, no caches, no logging. Whatever Herald
// or oidc-provider spend above this is their own cost; nothing on Node's HTTP stack and OpenSSL gets below it.
//
// env: PORT, CLIENT_ID, CLIENT_SECRET, RESOURCE, SCOPE (default orders:read)
import { createHash, generateKeyPairSync, randomUUID, sign, timingSafeEqual } from 'node:crypto'
import { createServer } from 'node:http'

const port = Number(process.env.PORT)
const { CLIENT_ID, CLIENT_SECRET, RESOURCE } = process.env
const SCOPE = process.env.SCOPE ?? 'orders:read'
if (!port || !CLIENT_ID || !CLIENT_SECRET || !RESOURCE) {
  console.error('floor: PORT, CLIENT_ID, CLIENT_SECRET and RESOURCE are required')
  process.exit(2)
}

const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' })
const issuer = `http://127.0.0.1:${port}`
const header = Buffer.from(JSON.stringify({ alg: 'ES256', kid: 'floor-es256', typ: 'at+jwt' })).toString('base64url')
const sha256 = (value) => createHash('sha256').update(value).digest()
const expected = sha256(`Basic ${Buffer.from(`${encodeURIComponent(CLIENT_ID)}:${encodeURIComponent(CLIENT_SECRET)}`).toString('base64')}`)

function reply(response, status, body) {
  const text = JSON.stringify(body)
  response.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text), 'cache-control': 'no-store' })
  response.end(text)
}

// Tokens are signed together once the turn has read every waiting request, at most 64 a turn, and answered after
// the turn's signatures, as Herald's token endpoint does (src/platform/turn-batch.ts): signatures back to back keep
// OpenSSL's code and tables in the CPU caches, which makes each one markedly cheaper. A floor that signed request
// by request would not be a floor.
const ISSUED_PER_TURN = 64
const pending = []
let scheduled = false

function schedule() {
  if (scheduled) return
  scheduled = true
  setImmediate(issuePending)
}

const server = createServer((request, response) => {
  if (request.method !== 'POST' || request.url !== '/token') return reply(response, 404, { error: 'not_found' })
  let body = ''
  request.setEncoding('utf8')
  request.on('data', (chunk) => {
    body += chunk
  })
  request.on('end', () => {
    const form = new URLSearchParams(body)
    if (!timingSafeEqual(sha256(request.headers.authorization ?? ''), expected)) return reply(response, 401, { error: 'invalid_client' })
    if (form.get('grant_type') !== 'client_credentials') return reply(response, 400, { error: 'unsupported_grant_type' })
    if (form.get('scope') !== SCOPE) return reply(response, 400, { error: 'invalid_scope' })
    pending.push(response)
    schedule()
  })
})

function issuePending() {
  scheduled = false
  const batch = pending.splice(0, ISSUED_PER_TURN)
  if (pending.length > 0) schedule()
  const tokens = batch.map(() => {
    const iat = Math.floor(Date.now() / 1000)
    const claims = { iss: issuer, sub: CLIENT_ID, aud: RESOURCE, exp: iat + 3600, iat, jti: randomUUID(), client_id: CLIENT_ID, scope: SCOPE }
    const input = `${header}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`
    return `${input}.${sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`
  })
  batch.forEach((response, index) => reply(response, 200, { access_token: tokens[index], token_type: 'Bearer', expires_in: 3600, scope: SCOPE }))
}

server.listen(port, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ ready: true, url: issuer, token_endpoint: `${issuer}/token` })}\n`)
})

process.once('SIGTERM', () => {
  server.close(() => process.exit(0))
  server.closeAllConnections()
  setTimeout(() => process.exit(0), 2000).unref()
})
