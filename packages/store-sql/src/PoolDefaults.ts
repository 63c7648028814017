/*
 * The server pool's defaults, in a module of their own so that the CLI's configuration can
 * state them without loading the stores.
 */

/** Connections of the server pool unless told otherwise: @effect/sql-pg's default, stated here so the metrics know it. */
export const DEFAULT_MAX_CONNECTIONS = 10

/**
 * Statements pipelined on one pooled connection at most, unless told otherwise; the pool opens
 * another connection once each it has carries this many. Fewer than the library's 32: a
 * statement waits behind those before it on its connection, and more connections let a larger
 * server run them in parallel (docs/decisions/0510-pipelined-statements.md).
 */
export const STATEMENTS_PER_CONNECTION = 8

/** How far behind the primary a read replica may be and still take reads (DROPSHELF_READ_MAX_LAG_MS). */
export const DEFAULT_MAX_LAG_MS = 1_000

/**
 * The pool's pipelining: statements of concurrent requests written together on a connection
 * and answered by one backend in one wake-up. Transactions, the snapshot's cursor and the
 * listener still take a connection alone. One statement a connection turns it off, for a
 * pooler in front that cannot pass pipelined statements through.
 */
export const pipelining = (statementsPerConnection: number = STATEMENTS_PER_CONNECTION) =>
  ({ multiplex: statementsPerConnection > 1, multiplexConcurrency: statementsPerConnection }) as const
