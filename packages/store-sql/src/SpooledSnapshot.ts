import type { ListingStore } from "@dropshelf/core"
import { Effect } from "effect"
import { mkdtemp, open, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { deserialize, serialize } from "node:v8"

/*
 * The embedded database's bulk snapshot, read whole into a file before its first chunk is handed
 * on. PGlite has one connection: a snapshot that waited for its reader between chunks would hold
 * it, and with it every other statement of the server, for as long as its slowest client takes
 * to read, or for ever if the client stops reading. Spooled, the transaction lasts as long as
 * reading the rows takes; the chunks are then read back from the file as the client takes them.
 * The file (each chunk V8-serialized, which keeps the reader's Map and Set, behind its length)
 * lives in a directory of its own under the system's temp directory and is removed however the
 * snapshot ends.
 */

type Store = ListingStore.ListingStore["Service"]

const LENGTH_BYTES = 4

/** `store` with its snapshot spooled; every other operation as it is. */
export const spooled = (store: Store): Store => ({
  ...store,
  snapshot: (request, emit) =>
    Effect.scoped(Effect.gen(function*() {
      const dir = yield* Effect.acquireRelease(
        Effect.promise(() => mkdtemp(join(tmpdir(), "dropshelf-snapshot-"))),
        (dir) => Effect.promise(() => rm(dir, { recursive: true, force: true }))
      )
      const file = yield* Effect.acquireRelease(
        Effect.promise(() => open(join(dir, "chunks"), "w+")),
        (file) => Effect.promise(() => file.close())
      )
      let written = 0
      yield* store.snapshot(request, (chunk) =>
        Effect.promise(async () => {
          const body = serialize(chunk)
          const length = Buffer.alloc(LENGTH_BYTES)
          length.writeUInt32BE(body.length)
          await file.writev([length, body], written)
          written += LENGTH_BYTES + body.length
        }))
      let position = 0
      const header = Buffer.alloc(LENGTH_BYTES)
      while (position < written) {
        const chunk = yield* Effect.promise(async () => {
          await file.read(header, 0, LENGTH_BYTES, position)
          const body = Buffer.alloc(header.readUInt32BE(0))
          await file.read(body, 0, body.length, position + LENGTH_BYTES)
          position += LENGTH_BYTES + body.length
          return deserialize(body) as ListingStore.SnapshotChunk
        })
        yield* emit(chunk)
      }
    }))
})
