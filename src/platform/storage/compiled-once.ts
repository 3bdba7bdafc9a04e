import { type Compilable, type CompiledQuery, type Kysely, createQueryId } from 'kysely'
import type { DB } from './schema.js'

/** What runs the compiled query: Herald's database, or a transaction's. */
export type QueryRunner = Pick<Kysely<DB>, 'executeQuery'>

interface Compiled<Values, Row> {
  query: CompiledQuery<Row>
  /** The parameters of one run: each placeholder's slot filled with its value, the query's constants as they were. */
  fill: (values: Values) => unknown[]
}

/**
 * A hot path's query, built and compiled by Kysely once, then run with each call's values. Kysely spends longer
 * building and compiling a join of a dozen columns than SQLite spends running it; a device's poll (RFC 8628 §3.4),
 * which comes every few seconds from every waiting device, is little more than that one read (docs/benchmarks.md).
 * `build` gets a placeholder for each named value and must bind each as a parameter, never write it into the text.
 */
export class CompiledOnce<Name extends string, Row> {
  #compiled: Compiled<Record<Name, string>, Row> | undefined

  constructor(
    private readonly db: QueryRunner,
    private readonly names: readonly Name[],
    private readonly build: (values: Record<Name, string>) => Compilable<Row>,
  ) {}

  async execute(values: Record<Name, string>): Promise<Row[]> {
    const { query, fill } = this.#compiled ?? this.#compile()
    const result = await this.db.executeQuery<Row>({ ...query, queryId: createQueryId(), parameters: fill(values) })
    return result.rows
  }

  #compile(): Compiled<Record<Name, string>, Row> {
    const placeholders = Object.fromEntries(this.names.map((name) => [name, `\u0000${name}\u0000`])) as Record<Name, string>
    const query = this.build(placeholders).compile()
    const slots = query.parameters.map((parameter) => this.names.find((name) => placeholders[name] === parameter))
    const unbound = this.names.filter((name) => !slots.includes(name))
    if (unbound.length > 0) throw new Error(`CompiledOnce: ${unbound.join(', ')} not bound as parameters of ${query.sql}`)
    const fill = (values: Record<Name, string>) => query.parameters.map((constant, index) => (slots[index] === undefined ? constant : values[slots[index]]))
    this.#compiled = { query, fill }
    return this.#compiled
  }
}
