import type pg from "pg"

/*
 * The statements of a first load (FirstLoad.ts) on server PostgreSQL. The fresh table, its
 * triggers, statistics targets, privileges and indexes are all read from the catalog's `listings`,
 * so the migrations stay the one owner of their definitions. The table is created in the
 * transaction: a load that fails or is abandoned leaves nothing behind.
 */

const LOAD = "dropshelf_first_load"

/** `maintenance_work_mem` at least, while the indexes are built. */
const INDEX_BUILD_MEMORY_MB = 256

export interface Table {
  /** The fresh table, schema-qualified and quoted. */
  readonly name: string
  /** The index builds left for `swap`. */
  readonly indexes: ReadonlyArray<string>
  /** Statements that give the table's indexes and constraints their names once the old table is gone. */
  readonly renames: ReadonlyArray<string>
}

const column = async <A>(client: pg.PoolClient, text: string, values: Array<unknown> = []): Promise<Array<A>> =>
  (await client.query<{ value: A }>(text, values)).rows.map((row) => row.value)

/**
 * Begins the transaction and, when listings has no row (tombstones count), creates the fresh
 * table with listings' columns, checks, defaults, triggers, statistics targets and privileges,
 * and the indexes of its constraints (the primary key: an upsert needs it). `undefined`, rolled
 * back, when listings has rows.
 */
export const open = async (client: pg.PoolClient): Promise<Table | undefined> => {
  await client.query("BEGIN")
  // Conflicts with itself and with every write, not with reads: a second first load, or any
  // other import, waits here until this one commits, then finds rows and upserts.
  await client.query("LOCK TABLE listings IN SHARE ROW EXCLUSIVE MODE")
  const [hasRows] = await column<boolean>(client, "SELECT EXISTS (SELECT 1 FROM listings) AS value")
  if (hasRows) {
    await client.query("ROLLBACK")
    return undefined
  }
  const [schema] = await column<string>(client, `SELECT quote_ident(n.nspname) AS value FROM pg_class c
    JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.oid = 'listings'::regclass`)
  const name = `${schema}.${LOAD}`
  await client.query(`CREATE TABLE ${name} (LIKE listings INCLUDING ALL EXCLUDING INDEXES)`)
  const setup = [
    // LIKE copies neither per-column statistics targets nor triggers nor privileges.
    ...await column<string>(client, `SELECT format('ALTER TABLE %s ALTER COLUMN %I SET STATISTICS %s', $1::text, attname, attstattarget)
      AS value FROM pg_attribute WHERE attrelid = 'listings'::regclass AND attnum > 0 AND NOT attisdropped AND attstattarget >= 0`, [name]),
    ...(await column<string>(client, `SELECT pg_get_triggerdef(oid) AS value FROM pg_trigger
      WHERE tgrelid = 'listings'::regclass AND NOT tgisinternal ORDER BY tgname`)).map((definition) =>
        replaceOnce(definition, / ON (\S+\.)?listings /, ` ON ${name} `)),
    ...await column<string>(client, `SELECT format('GRANT %s ON %s TO %s', a.privilege_type, $1::text,
        CASE WHEN a.grantee = 0 THEN 'PUBLIC' ELSE quote_ident(pg_get_userbyid(a.grantee)) END) AS value
      FROM pg_class c, aclexplode(c.relacl) a WHERE c.oid = 'listings'::regclass AND a.grantee <> c.relowner`, [name])
  ]
  const { rows } = await client.query<{ index: string; definition: string; constraint: string | null; constraint_definition: string | null }>(
    `SELECT quote_ident(c.relname) AS index, pg_get_indexdef(i.indexrelid) AS definition,
      quote_ident(con.conname) AS constraint, pg_get_constraintdef(con.oid) AS constraint_definition
    FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
    LEFT JOIN pg_constraint con ON con.conindid = i.indexrelid AND con.conrelid = i.indrelid
    WHERE i.indrelid = 'listings'::regclass ORDER BY c.relname`
  )
  const indexes: Array<string> = []
  const renames: Array<string> = []
  rows.forEach((row, position) => {
    const temporary = `${LOAD}_${position}`
    if (row.constraint !== null) {
      setup.push(`ALTER TABLE ${name} ADD CONSTRAINT ${temporary} ${row.constraint_definition!}`)
      renames.push(`ALTER TABLE ${schema}.listings RENAME CONSTRAINT ${temporary} TO ${row.constraint}`)
    } else {
      indexes.push(replaceOnce(row.definition, /^CREATE (UNIQUE )?INDEX \S+ ON \S+ /, `CREATE $1INDEX ${temporary} ON ${name} `))
      renames.push(`ALTER INDEX ${schema}.${temporary} RENAME TO ${row.index}`)
    }
  })
  for (const statement of setup) await client.query(statement)
  return { name, indexes, renames }
}

const replaceOnce = (text: string, from: RegExp, to: string): string => {
  const replaced = text.replace(from, to)
  if (replaced === text) throw new Error(`unexpected definition: ${text}`)
  return replaced
}

/**
 * Builds the indexes, gathers the planner's statistics, and puts the table in listings' place:
 * the exclusive lock is held only for the drop and the renames, and readers then see every row.
 */
export const swap = async (client: pg.PoolClient, table: Table, onIndex: (built: number, total: number) => void) => {
  // The trigram index builds in memory up to this, then merges: at the default 64 MB a million
  // rows took markedly longer (docs/performance.md). Never lowered; this transaction only.
  await client.query(`SELECT set_config('maintenance_work_mem',
    greatest(pg_size_bytes(current_setting('maintenance_work_mem')), ${INDEX_BUILD_MEMORY_MB} * 1024 * 1024) / 1024 || 'kB', true)`)
  onIndex(0, table.indexes.length)
  for (const [built, statement] of table.indexes.entries()) {
    await client.query(statement)
    onIndex(built + 1, table.indexes.length)
  }
  // Gathered here, not by autovacuum later: a first page's plan needs them (Migrations.ts, 0011).
  await client.query(`ANALYZE ${table.name}`)
  await client.query("LOCK TABLE listings IN ACCESS EXCLUSIVE MODE")
  await client.query("DROP TABLE listings")
  await client.query(`ALTER TABLE ${table.name} RENAME TO listings`)
  for (const statement of table.renames) await client.query(statement)
  await client.query("COMMIT")
}
