/**
 * The machine's ceiling: a bare node:http server answering every request with a precomputed
 * body of the same size as a real page. `node bench/ceiling.ts <body-file>` prints its port.
 */
import { readFileSync } from "node:fs"
import { createServer } from "node:http"

const body = readFileSync(process.argv[2]!)
const server = createServer((_request, response) => {
  response.writeHead(200, { "content-type": "application/json", "content-length": body.length })
  response.end(body)
})
server.listen(0, "127.0.0.1", () => {
  const address = server.address()
  console.log(typeof address === "object" && address !== null ? address.port : 0)
})
process.on("SIGTERM", () => server.close(() => process.exit(0)))
