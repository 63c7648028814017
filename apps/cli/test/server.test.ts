import { describe, it } from "vitest"
import { operatorSuite } from "./operatorSuite.ts"
import { serverTarget } from "./support.ts"

/** The same suite on a fresh database of the PostgreSQL server named by DATABASE_URL. */
const url = process.env.DATABASE_URL?.trim() || undefined

if (url === undefined) {
  describe("dropshelf on server storage", () => {
    it.skip("skipped: DATABASE_URL is not set", () => {})
  })
} else {
  operatorSuite("server", () => serverTarget(url))
}
