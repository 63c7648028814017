import { Config, ConfigProvider, Effect, Schema } from "effect"

/*
 * How a numeric setting is read from the environment, in a module of its own so that the CLI's
 * configuration can read its own settings the same way without loading the server.
 */

/** A whole number in `[minimum, maximum]` from `name`, `fallback` when unset; anything else stops the start, naming `name`. */
export const wholeNumberBetween = (name: string, minimum: number, maximum: number, fallback: number): Config.Config<number> =>
  Config.schema(Schema.Int.check(Schema.isBetween({ minimum, maximum })), name).pipe(Config.withDefault(fallback))

/** An http(s) URL from `name`, or `undefined` when unset or empty; `origin` refuses a path, query or credentials. */
const httpUrl = (name: string, shape: "origin" | "url"): Config.Config<string | undefined> =>
  Config.String(name).pipe(
    Config.option,
    Config.mapEffect((value) => {
      const text = value._tag === "Some" ? value.value.trim() : ""
      if (text === "") return Effect.succeed(undefined)
      const refuse = (why: string) =>
        Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({
          message: `${name} ${why}: expected ${shape === "origin" ? "an origin such as https://dropshelf.example.com" : "an http or https URL"}`
        })))
      let url: URL
      try {
        url = new URL(text)
      } catch {
        return refuse("is not a URL")
      }
      if (url.protocol !== "https:" && url.protocol !== "http:") return refuse(`has the scheme ${url.protocol.replace(/:$/, "")}`)
      if (url.username !== "" || url.password !== "") return refuse("carries credentials")
      if (shape === "url") return Effect.succeed(url.href)
      if (url.pathname !== "/" || url.search !== "" || url.hash !== "") return refuse("is more than an origin")
      return Effect.succeed(url.origin)
    })
  )

/**
 * `DROPSHELF_PUBLIC_URL`: the origin people reach the account area at, which sign-in links and
 * the account area's `curl` lines name; unset: the server's own address.
 */
export const publicUrlFromEnv: Config.Config<string | undefined> = httpUrl("DROPSHELF_PUBLIC_URL", "origin")

/** `DROPSHELF_UPGRADE_URL`: where to upgrade a plan, named by every 402 (`upgrade_url`) and the account area; unset: nowhere. */
export const upgradeUrlFromEnv: Config.Config<string | undefined> = httpUrl("DROPSHELF_UPGRADE_URL", "url")
