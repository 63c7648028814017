/**
 * An OTLP/HTTP receiver for the benchmark, in a process of its own (the benchmark's load runs
 * block its own event loop): reads each export, answers 200, and keeps the count of exports and
 * bytes in the file named by its first argument.
 */
import { writeFileSync } from "node:fs"
import { createServer } from "node:http"

const file = process.argv[2]!
let bytes = 0
let exports = 0
const server = createServer((request, response) => {
  request.on("data", (chunk: Buffer) => (bytes += chunk.length))
  request.on("end", () => {
    exports++
    writeFileSync(file, JSON.stringify({ bytes, exports }))
    response.writeHead(200, { "content-type": "application/json" }).end("{}")
  })
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  process.stdout.write(`${typeof address === "object" && address !== null ? address.port : 0}\n`)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
