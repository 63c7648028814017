import { PasskeyContract } from "@dropshelf/core/testing"
import { afterAll } from "@effect/vitest"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

PasskeyContract.suite("sql (pglite)", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  PasskeyContract.suite("sql (server)", serverStores(databaseUrl))
})
