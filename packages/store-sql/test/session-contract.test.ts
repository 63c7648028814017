import { SessionContract } from "@dropshelf/core/testing"
import { afterAll } from "@effect/vitest"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

SessionContract.suite("sql (pglite)", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  SessionContract.suite("sql (server)", serverStores(databaseUrl))
})
