import type { Directory, ListingStore, Operators } from "@dropshelf/core"
import { StoreMemory } from "@dropshelf/store-memory"
import { Config, Effect, Layer } from "effect"

/**
 * Configuration → layers, in one place, so `dropshelf serve`, every operator command and the
 * server's own start-up build the same storage from the same environment.
 */

/** The environment of product.md's Configuration table, with its defaults. */
export interface DropshelfConfig {
  readonly port: number
  readonly host: string
  /** Unset: the embedded database in `dataDir`. */
  readonly databaseUrl: string | undefined
  readonly dataDir: string
  /** Unset: rate-limit counters in this process. */
  readonly redisUrl: string | undefined
}

const optionalString = (name: string) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((value) => (value._tag === "Some" && value.value.trim() !== "" ? value.value : undefined))
  )

export const DropshelfConfig: Config.Config<DropshelfConfig> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  databaseUrl: optionalString("DATABASE_URL"),
  dataDir: Config.String("DROPSHELF_DATA_DIR").pipe(Config.withDefault("./.dropshelf")),
  redisUrl: optionalString("REDIS_URL")
})

/** What every command runs against: the operator and directory use cases over the configured storage. */
export type Services = Operators.Operators | Directory.Directory | ListingStore.ListingStore

/** Where the configured storage lives, for messages. */
export const describeStorage = (config: DropshelfConfig): string =>
  config.databaseUrl !== undefined ? "the PostgreSQL server in DATABASE_URL" : `the data directory ${config.dataDir}`

/**
 * The storage the configuration names.
 *
 * STORE-SQL WIRING PENDING: until `@dropshelf/store-sql` lands this is the in-memory adapter,
 * so nothing persists between two commands.
 */
export const layer = (_config: DropshelfConfig): Layer.Layer<Services> => StoreMemory.layerDirectory

/** Applies pending migrations; the names of those applied. */
export const migrate = (_config: DropshelfConfig): Effect.Effect<ReadonlyArray<string>> => Effect.succeed([])
