import { StoreContract } from "@dropshelf/core/testing"
import { afterAll, beforeAll, describe } from "@effect/vitest"
import { closePglite, DATABASE_URL, pgliteStores, serverDatabase, serverStores } from "./support.ts"

StoreContract.suite("sql (pglite)", pgliteStores)

afterAll(closePglite)

describe.skipIf(DATABASE_URL === undefined)(
  `sql (server)${DATABASE_URL === undefined ? " (skipped: DATABASE_URL not set)" : ""}`,
  () => {
    let database: Awaited<ReturnType<typeof serverDatabase>> | undefined
    beforeAll(async () => {
      database = await serverDatabase(DATABASE_URL!)
    })
    afterAll(async () => {
      await database?.drop()
    })
    StoreContract.suite("sql (server)", serverStores(() => database!.url))
  }
)
