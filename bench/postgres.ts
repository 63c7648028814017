/** The PostgreSQL server the benchmarks use (DATABASE_URL, default the local one), and psql on it. */
import { execFileSync } from "node:child_process"

export const serverUrl = process.env.DATABASE_URL ?? "postgres://postgres@127.0.0.1:5432/postgres"

/** The URL of another database on the same server. */
export const databaseUrl = (name: string) => {
  const url = new URL(serverUrl)
  url.pathname = `/${name}`
  return url.toString()
}

export const psql = (sql: string, database = "postgres") =>
  execFileSync("psql", [databaseUrl(database), "-Atqc", sql], { encoding: "utf8" }).trim()

/**
 * Transactions the database has committed (a statement outside a transaction is one): the
 * difference over a run counts its round trips.
 */
export const commitsIn = (database: string) =>
  Number(psql(`SELECT xact_commit FROM pg_stat_database WHERE datname = '${database}'`))

export const seconds = (start: bigint) => Number(process.hrtime.bigint() - start) / 1e9
