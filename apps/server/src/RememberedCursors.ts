import { Cursor } from "@dropshelf/core"
import { Effect, Layer } from "effect"

/*
 * The last cursors the server signed or checked, kept so that a busy page's cursor is neither
 * signed anew nor verified again: a cursor is a pure function of its position, and pages end
 * at the same positions again and again. Both maps hold the CURSORS_KEPT most recently added
 * entries; nothing needs invalidating, since the signing secret never changes while the process
 * runs. A cursor of the other ordering is handed to the codec, which refuses it by name.
 */

const CURSORS_KEPT = 512

const remember = <K, V>(map: Map<K, V>, key: K, value: V) => {
  if (map.size >= CURSORS_KEPT) map.delete(map.keys().next().value!)
  map.set(key, value)
}

/**
 * `Cursor.CursorCodec` over the codec `codec` provides, remembering what it signs and checks;
 * `enabled` false (`DROPSHELF_CACHES_OFF=cursors`) passes every call through.
 */
export const layer = <E, R>(codec: Layer.Layer<Cursor.CursorCodec, E, R>, enabled: boolean): Layer.Layer<Cursor.CursorCodec, E, R> =>
  !enabled ? codec : Layer.effect(
    Cursor.CursorCodec,
    Effect.gen(function*() {
      const signer = yield* Cursor.CursorCodec
      const issued = new Map<string, string>()
      const authentic = new Map<string, Cursor.CursorPosition>()
      return Cursor.CursorCodec.of({
        issue: (position) => {
          const text = Cursor.serialize(position)
          const known = issued.get(text)
          if (known !== undefined) return Effect.succeed(known)
          return Effect.map(signer.issue(position), (cursor) => {
            remember(issued, text, cursor)
            remember(authentic, cursor, position)
            return cursor
          })
        },
        read: (cursor, order) => {
          const known = authentic.get(cursor)
          if (known !== undefined && known.order === order) return Effect.succeed(known)
          return Effect.map(signer.read(cursor, order), (position) => {
            remember(authentic, cursor, position)
            return position
          })
        }
      })
    })
  ).pipe(Layer.provide(codec))
