import { html } from "@remix-run/html-template"
import { Config, ConfigProvider, Effect, Layer, Result } from "effect"
import { createTransport } from "nodemailer"
import { Email, EmailSignIn, Session, SignInMail, Time } from "@dropshelf/core"

/*
 * The account area's mail: sign-in links sent over SMTP with nodemailer
 * (docs/decisions/0802-email-sign-in.md), and the settings that configure it and self sign-up.
 */

export interface MailSettings {
  /** DROPSHELF_SMTP_URL: `smtp://user:password@host:587` (STARTTLS when offered) or `smtps://…` (TLS from the start). */
  readonly smtpUrl: string
  /** DROPSHELF_MAIL_FROM: the sender, `address` or `Name <address>`. */
  readonly from: string
}

export interface AccountMailSettings {
  /** Unset: no mail; email sign-in is off and open sign-up says it needs mail. */
  readonly mail: MailSettings | undefined
  readonly signUp: EmailSignIn.SignUpMode
}

const refuse = (message: string) => Effect.fail(new Config.ConfigError(new ConfigProvider.SourceError({ message })))

const optional = (name: string) =>
  Config.String(name).pipe(
    Config.option,
    Config.map((value) => (value._tag === "Some" && value.value.trim() !== "" ? value.value.trim() : undefined))
  )

const SMTP_EXAMPLE = "expected smtp://user:password@host:587 or smtps://user:password@host:465"

const smtpUrl = (text: string | undefined) => {
  if (text === undefined) return Effect.succeed(undefined)
  let url: URL
  try {
    url = new URL(text)
  } catch {
    return refuse(`DROPSHELF_SMTP_URL is not a URL: ${SMTP_EXAMPLE}`)
  }
  if (url.protocol !== "smtp:" && url.protocol !== "smtps:") return refuse(`DROPSHELF_SMTP_URL has the scheme ${url.protocol.replace(/:$/, "")}: ${SMTP_EXAMPLE}`)
  if (url.hostname === "") return refuse(`DROPSHELF_SMTP_URL names no host: ${SMTP_EXAMPLE}`)
  return Effect.succeed(text)
}

/** `address` or `Name <address>`, the address of Email.decode's shape. */
const sender = (text: string | undefined) => {
  if (text === undefined) return Effect.succeed(undefined)
  const address = /<([^<>]*)>\s*$/.exec(text)?.[1] ?? text
  return Result.isSuccess(Email.decode("DROPSHELF_MAIL_FROM", address))
    ? Effect.succeed(text)
    : refuse("DROPSHELF_MAIL_FROM is not an address: expected no-reply@example.com or dropshelf <no-reply@example.com>")
}

/** DROPSHELF_SMTP_URL, DROPSHELF_MAIL_FROM (needed with it) and DROPSHELF_SIGNUP (default `invite`). */
export const settingsFromEnv: Config.Config<AccountMailSettings> = Config.all({
  smtpUrl: optional("DROPSHELF_SMTP_URL").pipe(Config.mapEffect(smtpUrl)),
  from: optional("DROPSHELF_MAIL_FROM").pipe(Config.mapEffect(sender)),
  signUp: Config.Literals(EmailSignIn.SIGN_UP_MODES, "DROPSHELF_SIGNUP").pipe(Config.withDefault("invite" as const))
}).pipe(
  Config.mapEffect(({ from, signUp, smtpUrl }): Effect.Effect<AccountMailSettings, Config.ConfigError> => {
    if (smtpUrl === undefined) return Effect.succeed({ mail: undefined, signUp })
    if (from === undefined) return refuse("DROPSHELF_MAIL_FROM is unset: mail through DROPSHELF_SMTP_URL needs a sender, such as no-reply@example.com")
    return Effect.succeed({ mail: { smtpUrl, from }, signUp })
  })
)

const linkText = (purpose: SignInMail.SignInMessage["purpose"]) =>
  purpose === "sign-up" ? "Your dropshelf account is ready. Open this link to sign in:" : "Open this link to sign in to your dropshelf account:"

/** The mail: a short plain text, and the same in HTML with the link as a link. */
export const messageOf = (message: SignInMail.SignInMessage, origin: string, from: string) => {
  const url = `${origin}/signin?token=${message.token}`
  const until = `${Time.toIso(message.expiresAt).slice(0, 16).replace("T", " ")} UTC`
  const minutes = Session.LINK_LIFETIME_MS / Time.MINUTE
  const closing = "If you did not ask for it, ignore this mail: nothing happens without the link."
  return {
    from,
    to: message.to,
    subject: message.purpose === "sign-up" ? "Welcome to dropshelf: sign in" : "Sign in to dropshelf",
    text: `${linkText(message.purpose)}\n\n${url}\n\nIt works once, within ${minutes} minutes (until ${until}).\n${closing}\n`,
    html: String(html`<p>${linkText(message.purpose)}</p>
<p><a href="${url}">Sign in to dropshelf</a></p>
<p>It works once, within ${minutes} minutes (until ${until}).<br>${closing}</p>
`)
  }
}

/**
 * Sends sign-in links through the SMTP server of `settings`; a link's origin is `origin()`
 * (DROPSHELF_PUBLIC_URL, or the server's own address). The transport closes with the layer.
 */
export const layer = (settings: MailSettings, origin: () => string): Layer.Layer<SignInMail.SignInMail> =>
  Layer.effect(
    SignInMail.SignInMail,
    Effect.gen(function*() {
      const transport = yield* Effect.acquireRelease(
        Effect.sync(() => createTransport(settings.smtpUrl)),
        (transport) => Effect.sync(() => transport.close())
      )
      return SignInMail.SignInMail.of({
        send: (message) =>
          Effect.promise(() => transport.sendMail(messageOf(message, origin(), settings.from))).pipe(
            Effect.asVoid,
            Effect.withSpan("SmtpMail.send")
          )
      })
    })
  )

/** The account area's mail and sign-up policy, as `settings` say, for the core's `EmailSignIn`. */
export const layerFrom = (settings: AccountMailSettings, origin: () => string) =>
  Layer.mergeAll(
    settings.mail === undefined ? Layer.empty : layer(settings.mail, origin),
    Layer.succeed(EmailSignIn.SignUpPolicy, settings.signUp)
  )
