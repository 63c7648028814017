import { setFlagsFromString } from "node:v8"
import { runInNewContext } from "node:vm"
import { RdapAvailability, Server } from "@dropshelf/server"
import { Context, Effect, Layer } from "effect"
import { HttpServer } from "effect/http"
import { note } from "./Output.ts"
import * as Runtime from "./Runtime.ts"

/** Set once a server is up: a signal then ends the process normally (exit 0), not as an interruption. */
export const stopsOnSignal = { gracefully: false }

/**
 * V8 moves an allocation site's objects straight to the old generation once enough of them
 * survive a young collection ("pretenuring"). Under load the server's request objects wait for
 * a shared page statement (SharedReads) and often survive one, so V8 pretenures them, and the
 * old generation then fills with garbage that only a full mark-compact frees: measured, about
 * twenty 11-21 ms pauses in 16 s at 50 connections, which set the p99. Without pretenuring they
 * die young: 2 full collections, p99 22-27 ms instead of 32-53, req/s up ~15 %
 * (docs/decisions/0506-memory.md).
 * The flag only changes where new objects are allocated, so setting it at run time is safe.
 */
const keepRequestGarbageYoung = () => setFlagsFromString("--no-allocation-site-pretenuring")

/**
 * Start-up leaves V8's young generation at its largest (loading modules allocates fast) and all
 * but empty, and V8 shrinks it only in a memory-reducing collection, which Node never asks for
 * on its own. One such collection once the server listens gives that memory back: idle RSS
 * 193 → ~142 MB, measured. The young generation grows again under load as V8 sees fit. Node
 * offers the collection only as `gc()` under `--expose-gc`; the flag set at run time exposes
 * it in a new context, so the process needs no command-line flag.
 */
const releaseStartUpMemory = () => {
  setFlagsFromString("--expose-gc")
  const gc = runInNewContext("gc") as (options: { type: "major"; execution: "sync"; flavor: "last-resort" }) => void
  gc({ type: "major", execution: "sync", flavor: "last-resort" })
}

/**
 * `dropshelf serve` (and the end of `npm start`): migrate, run `before` against the same open
 * storage (the embedded database admits one process, so the demo set-up shares it), then serve
 * the API until SIGINT/SIGTERM, when in-flight requests finish and the storage closes.
 */
export const serve = <E = never>(
  config: Runtime.DropshelfConfig,
  before: Effect.Effect<void, E, Runtime.ServerServices> = Effect.void
) =>
  Effect.gen(function*() {
    keepRequestGarbageYoung()
    yield* before
    const server = yield* Layer.build(Server.layer({ port: config.port, host: config.host }))
    stopsOnSignal.gracefully = true
    const address = Context.get(server, HttpServer.HttpServer).address
    const counters = config.redisUrl !== undefined ? "rate limits in REDIS_URL" : "rate limits in this process"
    yield* note(`dropshelf: serving ${Runtime.describeStorage(config)} on ${HttpServer.formatAddress(address)}, ${counters} (Ctrl-C to stop)`)
    releaseStartUpMemory()
    return yield* Effect.never
  }).pipe(
    Effect.scoped,
    Effect.provide(Runtime.serverLayer(config, RdapAvailability.layerFromEnv))
  )
