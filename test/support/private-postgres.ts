import { execFile } from 'node:child_process'
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import pg from 'pg'
import { freePort } from './herald.js'

/**
 * Where PostgreSQL's server programs are: `HERALD_TEST_POSTGRES_BIN`, else the newest of Debian's
 * `/usr/lib/postgresql/{version}/bin` (the `postgresql` package; `pg_config --bindir` names the client's).
 */
function serverPrograms(): string {
  const given = process.env.HERALD_TEST_POSTGRES_BIN
  if (given) return given
  const root = '/usr/lib/postgresql'
  const versions = existsSync(root) ? readdirSync(root).filter((version) => existsSync(path.join(root, version, 'bin', 'initdb'))) : []
  const newest = versions.sort((a, b) => Number(b) - Number(a))[0]
  if (newest === undefined) throw new Error('No PostgreSQL server programs (initdb, pg_ctl) found: install the postgresql package or set HERALD_TEST_POSTGRES_BIN')
  return path.join(root, newest, 'bin')
}

/** The OS user the server runs as: initdb and postgres refuse to run as root. */
const SERVER_USER = 'postgres'

/**
 * A PostgreSQL cluster of the test's own, in a temporary folder, on a free port of 127.0.0.1: it can be stopped and
 * started as a real outage without touching the shared server. Trust authentication, user `postgres`.
 */
export class PrivateCluster {
  private constructor(
    private readonly bin: string,
    private readonly dir: string,
    readonly port: number,
  ) {}

  static async create(): Promise<PrivateCluster> {
    const bin = serverPrograms()
    const dir = mkdtempSync(path.join(tmpdir(), 'herald-pg-'))
    if (runningAsRoot()) {
      const { uid, gid } = await ids(SERVER_USER)
      chownSync(dir, uid, gid)
    }
    const cluster = new PrivateCluster(bin, dir, await freePort())
    await cluster.#run('initdb', ['-D', cluster.#data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions'])
    await cluster.start()
    return cluster
  }

  get #data(): string {
    return path.join(this.dir, 'data')
  }

  /** A connection string to `database` on this cluster. */
  url(database = 'postgres'): string {
    return `postgres://postgres@127.0.0.1:${this.port}/${database}`
  }

  /** Starts the server and waits until it accepts connections. */
  async start(): Promise<void> {
    // The socket goes in the cluster's own folder; fsync off: the data is thrown away.
    const options = `-p ${this.port} -c listen_addresses=127.0.0.1 -k ${this.dir} -c fsync=off`
    await this.#run('pg_ctl', ['-D', this.#data, '-l', path.join(this.dir, 'server.log'), '-o', options, '-w', 'start'])
  }

  /**
   * Stops the server as an operator or a failover would: "fast" shutdown ends every session (SQLSTATE 57P01) and
   * closes the port; waits until it has stopped.
   */
  async stop(): Promise<void> {
    await this.#run('pg_ctl', ['-D', this.#data, '-m', 'fast', '-w', 'stop'])
  }

  /** Runs `text` with `values` on `database` as the superuser. */
  async query<R extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = [], database = 'postgres'): Promise<R[]> {
    const client = new pg.Client({ connectionString: this.url(database) })
    await client.connect()
    try {
      return (await client.query<R>(text, values)).rows
    } finally {
      await client.end()
    }
  }

  /** Stops the server if it runs and removes its folder. */
  async destroy(): Promise<void> {
    await this.#run('pg_ctl', ['-D', this.#data, '-m', 'immediate', '-w', 'stop']).catch(() => {})
    rmSync(this.dir, { recursive: true, force: true })
  }

  #run(program: string, args: string[]): Promise<void> {
    const command = path.join(this.bin, program)
    const [file, argv] = runningAsRoot() ? ['runuser', ['-u', SERVER_USER, '--', command, ...args]] : [command, args]
    return new Promise((resolve, reject) =>
      execFile(file, argv, { cwd: this.dir }, (error, _stdout, stderr) => (error ? reject(new Error(`${program} failed: ${error.message}\n${stderr}`)) : resolve())),
    )
  }
}

function runningAsRoot(): boolean {
  return process.getuid?.() === 0
}

/** The uid and gid of an OS user, from `id`. */
function ids(user: string): Promise<{ uid: number; gid: number }> {
  const read = (flag: string) =>
    new Promise<number>((resolve, reject) => execFile('id', [flag, user], (error, stdout) => (error ? reject(error) : resolve(Number(stdout.trim())))))
  return Promise.all([read('-u'), read('-g')]).then(([uid, gid]) => ({ uid, gid }))
}
