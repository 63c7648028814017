import { DEFAULT_DATA_DIR } from "@dropshelf/store-sql/DataDirLock"
import { DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_LAG_MS, STATEMENTS_PER_CONNECTION } from "@dropshelf/store-sql/PoolDefaults"
import { publicUrlFromEnv, wholeNumberBetween } from "@dropshelf/server/Settings"
import { Config, ConfigProvider, Effect } from "effect"
import { type CacheName, cachesOff } from "./Caches.ts"

/**
 * The environment of product.md's Configuration table, read by every command. Kept apart from
 * the layers (Runtime.ts) so that a command loads storage code only when it opens storage.
 */
export interface DropshelfConfig {
  readonly port: number
  readonly host: string
  /** Unset: the embedded database in `dataDir`. */
  readonly databaseUrl: string | undefined
  readonly dataDir: string
  /** Unset: rate-limit counters in this process. */
  readonly redisUrl: string | undefined
  /** `count-only` (DROPSHELF_RATE_LIMIT, benchmarks only): count every request, refuse none. */
  readonly rateLimitMode: "enforce" | "count-only"
  /**
   * The origin people reach the account area at (DROPSHELF_PUBLIC_URL), which sign-in links
   * name; unset: `http://HOST:PORT`, a wildcard host read as 127.0.0.1.
   */
  readonly publicUrl: string | undefined
  /**
   * Streaming replicas of DATABASE_URL that take reads (DATABASE_READ_URL, comma-separated) and
   * how far behind one may be (DROPSHELF_READ_MAX_LAG_MS); `serve` only.
   */
  readonly replicas: {
    readonly readUrls: ReadonlyArray<string>
    readonly readMaxLagMs: number
  }
  /** The PostgreSQL pool (DROPSHELF_DB_POOL_SIZE, DROPSHELF_DB_PIPELINE); unused on the embedded database. */
  readonly pool: {
    readonly maxConnections: number
    readonly statementsPerConnection: number
  }
  /** Caches switched off to measure what they buy (DROPSHELF_CACHES_OFF, Caches.ts); default none. */
  readonly cachesOff: ReadonlySet<CacheName>
}

const optionalString = (name: string) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((value) => (value._tag === "Some" && value.value.trim() !== "" ? value.value.trim() : undefined))
  )

/**
 * `DATABASE_URL` as the PostgreSQL client reads it, `postgres://` or `postgresql://` with a host
 * (or a socket directory in `?host=`): anything else is refused at start rather than failing
 * at the first connection with a driver's message.
 */
const postgresUrl = (value: string | undefined, name = "DATABASE_URL"): Effect.Effect<string | undefined, Config.ConfigError> => {
  if (value === undefined) return Effect.succeed(undefined)
  const refuse = (why: string) =>
    Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message: `${name} ${why}: expected postgres://user@host:5432/database` })))
  let url: URL
  try {
    url = new URL(value)
  } catch {
    return refuse("is not a URL")
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") return refuse(`has the scheme ${url.protocol.replace(/:$/, "")}`)
  if (url.hostname === "" && !url.searchParams.has("host")) return refuse("names no host")
  return Effect.succeed(value)
}

export const DropshelfConfig: Config.Config<DropshelfConfig> = Config.all({
  port: Config.Port("PORT").pipe(Config.withDefault(8080)),
  host: Config.String("HOST").pipe(Config.withDefault("127.0.0.1")),
  databaseUrl: optionalString("DATABASE_URL").pipe(Config.mapEffect((value) => postgresUrl(value))),
  replicas: Config.all({
    readUrls: optionalString("DATABASE_READ_URL").pipe(Config.mapEffect((value) =>
      Effect.forEach(
        (value ?? "").split(",").map((url) => url.trim()).filter((url) => url !== ""),
        (url) => Effect.map(postgresUrl(url, "DATABASE_READ_URL"), (checked) => checked!)
      )
    )),
    readMaxLagMs: wholeNumberBetween("DROPSHELF_READ_MAX_LAG_MS", 100, 600_000, DEFAULT_MAX_LAG_MS)
  }),
  dataDir: optionalString("DROPSHELF_DATA_DIR").pipe(Config.map((dir) => dir ?? DEFAULT_DATA_DIR)),
  redisUrl: optionalString("REDIS_URL"),
  publicUrl: publicUrlFromEnv,
  rateLimitMode: Config.Literals(["enforce", "count-only"], "DROPSHELF_RATE_LIMIT").pipe(Config.withDefault("enforce")),
  pool: Config.all({
    // One of them listens for key and plan changes, so at least two.
    maxConnections: wholeNumberBetween("DROPSHELF_DB_POOL_SIZE", 2, 1_000, DEFAULT_MAX_CONNECTIONS),
    statementsPerConnection: wholeNumberBetween("DROPSHELF_DB_PIPELINE", 1, 256, STATEMENTS_PER_CONNECTION)
  }),
  cachesOff
})

/** The origin of the account area's links: DROPSHELF_PUBLIC_URL, or this server's own address. */
export const publicOrigin = (config: DropshelfConfig): string => {
  if (config.publicUrl !== undefined) return config.publicUrl
  const host = config.host === "0.0.0.0" || config.host === "::" ? "127.0.0.1" : config.host
  return `http://${host.includes(":") ? `[${host}]` : host}:${config.port}`
}

/** A sign-in link's URL: the account area's page that spends it (on a POST). */
export const signInUrl = (config: DropshelfConfig, token: string): string => `${publicOrigin(config)}/signin?token=${token}`

/** Where the configured storage lives, for messages. */
export const describeStorage = (config: DropshelfConfig): string =>
  config.databaseUrl !== undefined ? "the PostgreSQL database of DATABASE_URL" : `the data directory ${config.dataDir}`
