import { Command } from "effect/cli"
import { accounts } from "./commands/Accounts.ts"
import { backup, restore } from "./commands/BackupRestore.ts"
import { keys } from "./commands/Keys.ts"
import { delist, importCommand, listings, masks, seed } from "./commands/Listings.ts"
import { holds, reveals, watchesCommand } from "./commands/Reads.ts"
import { demo, migrate, serve, worker } from "./commands/Serving.ts"

/*
 * The `dropshelf` command tree, exactly as product.md's Operator interface table: names, flags,
 * `--json` documents. Each group of commands has its module under commands/. Handlers are thin:
 * decode, call the core's Operators, print. Everything past the tree (storage, the server,
 * import, seed) is loaded by the handler that needs it, so `--help` or a refused invocation
 * loads none of it.
 */

export const root = Command.make("dropshelf").pipe(
  Command.withDescription("Operate a dropshelf expired-domain directory"),
  Command.withSubcommands([
    migrate,
    serve,
    worker,
    importCommand,
    delist,
    accounts,
    keys,
    holds,
    listings,
    reveals,
    masks,
    watchesCommand,
    seed,
    backup,
    restore,
    demo
  ])
)

export const run = Command.run(root, { version: "0.1.0" })
