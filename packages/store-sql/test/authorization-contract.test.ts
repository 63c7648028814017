import { AuthorizationContract } from "@dropshelf/core/testing"
import { afterAll } from "@effect/vitest"
import { closePglite, describeOnServer, pgliteStores, serverStores } from "./support.ts"

AuthorizationContract.suite("sql (pglite)", pgliteStores)

afterAll(closePglite)

describeOnServer("sql (server)", (databaseUrl) => {
  AuthorizationContract.suite("sql (server)", serverStores(databaseUrl))
})
