/**
 * Which tenant tables a statement leaves without an account. Every table a statement names (after FROM, JOIN,
 * UPDATE, INSERT INTO or DELETE FROM, in the statement or any subquery) must be scoped by its own `account_id`:
 *
 * - compared with a bound value or a list of them (`c.account_id = $1`, `account_id in (?, ?)`, or as part of a row
 *   in bound rows or a subquery's: `(account_id, id) in ((?, ?), …)`), qualified by the
 *   name the statement gives the table (its alias, if it has one), or unqualified within the table's own query when
 *   that query names no other tenant table (an unqualified column there can only be that table's);
 * - written by an INSERT (`insert into t (account_id, …)`);
 * - or equated with the `account_id` of a table that is scoped (`c.account_id = e.account_id`), or of rows the
 *   statement brings itself (`e.account_id = d.account_id`, `d` a subquery or bound JSON rows).
 *
 * The SET list of an UPDATE names no account: it writes one. A comparison with another column names none either,
 * unless that column's table is scoped. This reads Herald's SQL as Kysely and the dialect modules write it; it is no
 * general SQL parser.
 */

/** A table as one query names it. */
interface TableReference {
  table: string
  /** What the statement calls it: its alias, else its name. */
  name: string
}

/** One query of the statement, the statement's own or a subquery's, without its subqueries. */
interface Query {
  text: string
  tables: TableReference[]
}

const BOUND_VALUE = String.raw`(?:=\s*(?:\$\d+|\?)|in\s*\(\s*(?:\$\d+|\?))`

/**
 * A row with the account in a list of bound rows or in a subquery's rows (`(t.account_id, t.name) in (select …)`):
 * the subquery's own tables are checked where it names them.
 */
const ROW_IN_ROWS = /\(\s*(?:(\w+)\.)?account_id\s*,[^()]*\)\s*in\s*\(\s*(?:subquery\)|\(\s*(?:\$\d+|\?))/gi

/** Words that may follow a table's name and are no alias. */
const NOT_AN_ALIAS = new Set(
  'where set on using inner left right full cross natural join order group limit offset values returning for union except intersect window having default select as'.split(' '),
)

/** The names (aliases where given) of the tenant tables `statement` names without scoping them by account. */
export function unscopedTables(statement: string, tenantTables: ReadonlySet<string>): string[] {
  const queries = splitQueries(unquoted(statement))
  const conditions = queries.map((query) => withoutSetList(query.text)).join(' ')
  // Rows the statement brings itself (a subquery's, bound JSON rows, a CTE's) carry accounts it chose: its tables
  // are checked where they are named, so a tenant table equated with one of them is scoped.
  const derived = queries.flatMap((query) => [...query.text.matchAll(/\(subquery\)\s*(?:as\s+)?(\w+)/gi)].map((match) => match[1]!))
  const scoped = new Set<string>([...derived, ...queries.flatMap((query) => query.tables.filter((reference) => !tenantTables.has(reference.table)).map((reference) => reference.name))])
  const tenantReferences: TableReference[] = []
  const equalities = [...conditions.matchAll(/\b(\w+)\.account_id\s*=\s*(\w+)\.account_id\b/gi)].map((match) => [match[1]!, match[2]!] as const)

  for (const query of queries) {
    const tenants = query.tables.filter((reference) => tenantTables.has(reference.table))
    tenantReferences.push(...tenants)
    for (const reference of tenants) {
      if (new RegExp(String.raw`\b${reference.name}\.account_id\s*${BOUND_VALUE}`, 'i').test(conditions)) scoped.add(reference.name)
    }
    for (const match of query.text.matchAll(ROW_IN_ROWS)) {
      const name = match[1] ?? (tenants.length === 1 ? tenants[0]!.name : undefined)
      if (name !== undefined) scoped.add(name)
    }
    const insert = /\binsert\s+into\s+(\w+)\s*\(([^)]*)\)/i.exec(query.text)
    if (insert && /\baccount_id\b/i.test(insert[2]!)) scoped.add(insert[1]!)
    // An INSERT's target is not among the tables its SELECT reads.
    const read = insert ? tenants.slice(1) : tenants
    if (read.length !== 1) continue
    const own = withoutSetList(query.text)
    if (new RegExp(String.raw`(?<![.\w])account_id\s*${BOUND_VALUE}`, 'i').test(own)) scoped.add(read[0]!.name)
    for (const match of own.matchAll(/(?<![.\w])account_id\s*=\s*(\w+)\.account_id\b|\b(\w+)\.account_id\s*=\s*account_id\b(?!\.)/gi)) {
      equalities.push([read[0]!.name, (match[1] ?? match[2])!])
    }
  }

  // An account_id equated with a scoped table's is scoped too; repeated until nothing changes.
  for (let grown = true; grown; ) {
    grown = false
    for (const [left, right] of equalities) {
      if (scoped.has(left) !== scoped.has(right)) {
        scoped.add(left).add(right)
        grown = true
      }
    }
  }
  return [...new Set(tenantReferences.map((reference) => reference.name).filter((name) => !scoped.has(name)))]
}

/** The statement without identifier quotes and with its string literals emptied, which can't name a table. */
function unquoted(statement: string): string {
  return statement.replace(/'(?:[^']|'')*'/g, "''").replace(/"(\w+)"/g, '$1')
}

/**
 * The statement's queries: its own, then each subquery's (a bracket that opens with SELECT or WITH, or with the
 * INSERT, UPDATE or DELETE of a data-modifying CTE).
 */
function splitQueries(statement: string): Query[] {
  const texts: string[] = []
  const open: Array<{ text: string; subquery: boolean }> = [{ text: '', subquery: true }]
  for (let index = 0; index < statement.length; index++) {
    const char = statement[index]!
    if (char === '(') {
      const subquery = /^\(\s*(?:select|with|insert|update|delete)\b/i.test(statement.slice(index, index + 12))
      if (subquery) open.at(-1)!.text += ' (subquery) '
      open.push({ text: subquery ? '' : '(', subquery })
    } else if (char === ')' && open.length > 1) {
      const closed = open.pop()!
      if (closed.subquery) texts.push(closed.text)
      else open.at(-1)!.text += `${closed.text})`
    } else {
      open.at(-1)!.text += char
    }
  }
  while (open.length > 1) {
    const closed = open.pop()!
    open.at(-1)!.text += closed.text
  }
  texts.unshift(open[0]!.text)
  return texts.map((text) => ({ text, tables: tablesOf(text) }))
}

function tablesOf(query: string): TableReference[] {
  return [...query.matchAll(/\b(?:from|join|update|into)\s+(\w+)(?=(?:\s+(?:as\s+)?(\w+))?)/gi)].map((match) => {
    const alias = match[2]
    return { table: match[1]!, name: alias !== undefined && !NOT_AN_ALIAS.has(alias.toLowerCase()) ? alias : match[1]! }
  })
}

/** An UPDATE's (or an upsert's) SET list, which writes columns and compares none. */
function withoutSetList(query: string): string {
  return query.replace(/\bset\b[\s\S]*?(?=\bwhere\b|\bfrom\b|\breturning\b|$)/gi, ' ')
}
