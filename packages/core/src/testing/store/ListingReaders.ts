import { assert, it } from "@effect/vitest"
import { Effect } from "effect"
import type { ListingId } from "../../domain/Ids.ts"
import { DAY } from "../../domain/Time.ts"
import { HoldStore } from "../../ports/HoldStore.ts"
import { ListingStore, type PageRequest } from "../../ports/ListingStore.ts"
import { RevealStore } from "../../ports/RevealStore.ts"
import { listingInput } from "../fixtures.ts"
import { pageRequest } from "./ListingPages.ts"
import { pro, type Run, T0 } from "./Stores.ts"

/** What a page or a single read answers for its reader: exactly what the hold and reveal stores say. */
export const readers = (run: Run) => {
  it.live("every page says exactly what the hold and reveal stores say of its rows, on either kind of run", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      const holds = yield* HoldStore
      const reveals = yield* RevealStore
      const ids = ["RDR00001", "RDR00002", "RDR00003", "RDR00004", "RDR00005", "RDR00006", "RDR00007"] as Array<ListingId>
      yield* store.upsert(ids.map((id) => listingInput(id)))
      const running = yield* holds.acquire({ accountId: "holder", listingId: ids[0]!, plan: pro, now: T0 })
      const ended = yield* holds.acquire({ accountId: "holder", listingId: ids[1]!, plan: pro, now: T0 })
      yield* holds.end({ accountId: "holder", holdId: ended.hold.id, now: T0 + 1, outcome: "released" })
      yield* holds.acquire({ accountId: "other", listingId: ids[5]!, plan: pro, now: T0 })
      // The first and last rows among them: a store may look reveals up over a page's span of ids.
      yield* reveals.record({ accountId: "reader", listingId: ids[0]!, at: T0, charge: undefined })
      yield* reveals.record({ accountId: "reader", listingId: ids[2]!, at: T0, charge: undefined })
      yield* reveals.record({ accountId: "reader", listingId: ids[6]!, at: T0, charge: undefined })
      yield* reveals.record({ accountId: "someone", listingId: ids[3]!, at: T0, charge: undefined })
      yield* store.delist([ids[4]!], "sold")
      const expected = (rowIds: ReadonlyArray<string>, at: number, revealsOf: string | undefined) =>
        Effect.gen(function*() {
          return {
            running: yield* holds.runningOn(rowIds, at),
            revealed: revealsOf === undefined ? new Set<string>() : yield* reveals.revealedAmong(revealsOf, rowIds)
          }
        })
      for (const revealsOf of ["reader", "nobody", undefined]) {
        for (const at of [T0 + 2, T0 + 400 * DAY]) {
          const reader = { at, revealsOf }
          const page = yield* store.page(pageRequest({ now: at, reader }))
          const rowIds = page.rows.map((row) => row.id)
          assert.deepStrictEqual({ running: page.running, revealed: page.revealed }, yield* expected(rowIds, at, revealsOf))
          // Paged by cursor, two rows a page, in either order: each page answers for its own rows.
          for (const order of ["id", "latest"] as const) {
            let position: PageRequest["after"]
            for (let i = 0; i < ids.length; i++) {
              const part = yield* store.page(pageRequest({ now: at, reader, order, limit: 2, after: position }))
              const partIds = part.rows.map((row) => row.id)
              assert.deepStrictEqual(
                { running: part.running, revealed: part.revealed },
                yield* expected(partIds, at, revealsOf),
                `${order} ${revealsOf} ${at} ${partIds}`
              )
              const last = part.rows[part.rows.length - 1]
              if (!part.hasMore || last === undefined) break
              position = order === "id" ? { order, id: last.id } : { order, id: last.id, discoveredAt: last.discoveredAt }
            }
          }
          // A since run followed page by page, as a consumer does: every page answers afresh.
          let after: PageRequest["after"]
          const seen: Array<string> = []
          for (let i = 0; i < ids.length + 1; i++) {
            const sincePage = yield* store.page(pageRequest({ now: at, reader, since: T0 - 400 * DAY, limit: 2, after }))
            const sinceIds = sincePage.rows.map((row) => row.id)
            seen.push(...sinceIds)
            assert.deepStrictEqual(
              { running: sincePage.running, revealed: sincePage.revealed },
              yield* expected(sinceIds, at, revealsOf),
              `${revealsOf} ${at} ${sinceIds}`
            )
            if (!sincePage.hasMore) break
            after = { order: "id", id: sinceIds[sinceIds.length - 1] as ListingId }
          }
          assert.deepStrictEqual(seen, ids)
        }
      }
      // Spot checks of what the comparison above relies on.
      const now = yield* store.page(pageRequest({ now: T0 + 2, reader: { at: T0 + 2, revealsOf: "reader" } }))
      assert.deepStrictEqual(now.running.get(ids[0]!), running.hold)
      assert.isFalse(now.running.has(ids[1]!))
      assert.deepStrictEqual([...now.revealed].sort(), [ids[0]!, ids[2]!, ids[6]!])
      const noCeiling = yield* store.page(pageRequest({ now: T0 + 2, reader: { at: T0 + 2, revealsOf: undefined } }))
      assert.deepStrictEqual(noCeiling.revealed, new Set())
      assert.strictEqual(noCeiling.running.size, 2)
    })))

  it.live("a single read says what find, the hold store and the reveal store say of its listing, in one look-up", () =>
    run(Effect.gen(function*() {
      const store = yield* ListingStore
      const holds = yield* HoldStore
      const reveals = yield* RevealStore
      const ids = ["ONE00001", "ONE00002", "ONE00003", "ONE00004", "ONE00005"] as Array<ListingId>
      yield* store.upsert(ids.map((id) => listingInput(id)))
      yield* holds.acquire({ accountId: "holder", listingId: ids[0]!, plan: pro, now: T0 })
      const ended = yield* holds.acquire({ accountId: "holder", listingId: ids[1]!, plan: pro, now: T0 })
      yield* holds.end({ accountId: "holder", holdId: ended.hold.id, now: T0 + 1, outcome: "released" })
      yield* reveals.record({ accountId: "reader", listingId: ids[2]!, at: T0, charge: undefined })
      yield* reveals.record({ accountId: "someone", listingId: ids[0]!, at: T0, charge: undefined })
      yield* store.delist([ids[3]!], "sold")
      for (const id of [...ids, "ONE00009" as ListingId]) {
        for (const revealsOf of ["reader", "someone", undefined]) {
          for (const at of [T0 + 2, T0 + 400 * DAY]) {
            const found = yield* store.findForReader(id, { at, revealsOf })
            const listing = yield* store.find(id)
            if (listing === undefined) {
              assert.strictEqual(found, undefined)
              continue
            }
            const revealed = revealsOf === undefined ? false : (yield* reveals.revealedAmong(revealsOf, [id])).has(id)
            assert.deepStrictEqual(found, { listing, running: (yield* holds.runningOn([id], at)).get(id), revealed }, `${id} ${revealsOf} ${at}`)
          }
        }
      }
      // Read all at once, as concurrent requests do (a store may answer them together): each gets its own answer.
      const asked = [...ids, "ONE00009" as ListingId].flatMap((id) => ["reader", "someone", undefined].map((revealsOf) => ({ id, revealsOf })))
      const alone = yield* Effect.forEach(asked, ({ id, revealsOf }) => store.findForReader(id, { at: T0 + 2, revealsOf }))
      const together = yield* Effect.forEach(asked, ({ id, revealsOf }) => store.findForReader(id, { at: T0 + 2, revealsOf }), { concurrency: "unbounded" })
      assert.deepStrictEqual(together, alone)
      // Spot checks of what the comparison relies on.
      assert.isDefined((yield* store.findForReader(ids[0]!, { at: T0 + 2, revealsOf: "reader" }))!.running)
      assert.isTrue((yield* store.findForReader(ids[2]!, { at: T0 + 2, revealsOf: "reader" }))!.revealed)
      assert.isFalse((yield* store.findForReader(ids[2]!, { at: T0 + 2, revealsOf: "someone" }))!.revealed)
    })))
}
