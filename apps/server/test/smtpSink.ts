import { SMTPServer } from "smtp-server"

/*
 * A local SMTP server that keeps every mail it is sent, for the tests of email sign-in: plain
 * SMTP on loopback, any user and password accepted.
 */

export interface Mail {
  readonly to: ReadonlyArray<string>
  /** The raw message, quoted-printable decoded: headers and both parts. */
  readonly text: string
  /** The sign-in link in it. */
  readonly link: string | undefined
}

export interface SmtpSink {
  /** `smtp://user:password@127.0.0.1:<port>`, as DROPSHELF_SMTP_URL. */
  readonly url: string
  readonly mails: Array<Mail>
  /** The mails sent to `address` so far. */
  readonly to: (address: string) => ReadonlyArray<Mail>
  /** Waits for the `count`th mail to `address` (default the first); fails after `timeoutMs`. */
  readonly waitFor: (address: string, count?: number, timeoutMs?: number) => Promise<Mail>
  readonly close: () => Promise<void>
}

const decodeQuotedPrintable = (raw: string) =>
  raw.replace(/=\r?\n/g, "").replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)))

export const startSmtpSink = async (): Promise<SmtpSink> => {
  const mails: Array<Mail> = []
  const server = new SMTPServer({
    disabledCommands: ["STARTTLS"],
    allowInsecureAuth: true,
    authOptional: true,
    logger: false,
    onAuth: (auth, _session, callback) => callback(null, { user: auth.username }),
    onData: (stream, session, callback) => {
      const chunks: Array<Buffer> = []
      stream.on("data", (chunk: Buffer) => chunks.push(chunk))
      stream.on("end", () => {
        const text = decodeQuotedPrintable(Buffer.concat(chunks).toString("utf8"))
        mails.push({
          to: session.envelope.rcptTo.map((recipient) => recipient.address.toLowerCase()),
          text,
          link: /https?:\/\/[^\s"<>]+\/signin\?token=dsl_[A-Za-z0-9_-]{43}/.exec(text)?.[0]
        })
        callback()
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.server.address() as { port: number }).port
  const to = (address: string) => mails.filter((mail) => mail.to.includes(address.toLowerCase()))
  return {
    url: `smtp://sink-user:sink-password@127.0.0.1:${port}`,
    mails,
    to,
    waitFor: async (address, count = 1, timeoutMs = 5_000) => {
      const until = Date.now() + timeoutMs
      while (to(address).length < count) {
        if (Date.now() > until) throw new Error(`no mail #${count} to ${address} within ${timeoutMs} ms`)
        await new Promise((resolve) => setTimeout(resolve, 20))
      }
      return to(address)[count - 1]!
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve()))
  }
}
