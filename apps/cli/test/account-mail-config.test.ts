/**
 * The account area's mail and sign-up settings, as `dropshelf serve` reads them at start: an
 * unusable value stops the start with one line naming the variable and exit 2.
 */
import { afterEach, describe, it } from "vitest"
import { embeddedTargets, expectOneLineFailure, killStragglers, run } from "./support.ts"

describe("mail and sign-up settings", () => {
  const target = embeddedTargets({ migrated: true })
  afterEach(() => killStragglers())

  it("refuses a bad DROPSHELF_SIGNUP, DROPSHELF_SMTP_URL or DROPSHELF_MAIL_FROM with one line and exit 2", async () => {
    const env = target().env
    const refusals: Array<[Record<string, string>, RegExp]> = [
      [{ DROPSHELF_SIGNUP: "anyone" }, /DROPSHELF_SIGNUP/],
      [{ DROPSHELF_SMTP_URL: "not a url", DROPSHELF_MAIL_FROM: "a@example.com" }, /DROPSHELF_SMTP_URL is not a URL/],
      [{ DROPSHELF_SMTP_URL: "http://mail.example.com", DROPSHELF_MAIL_FROM: "a@example.com" }, /DROPSHELF_SMTP_URL has the scheme http/],
      [{ DROPSHELF_SMTP_URL: "smtp://mail.example.com:587" }, /DROPSHELF_MAIL_FROM is unset/],
      [{ DROPSHELF_SMTP_URL: "smtp://mail.example.com:587", DROPSHELF_MAIL_FROM: "dropshelf" }, /DROPSHELF_MAIL_FROM is not an address/]
    ]
    const outcomes = await Promise.all(refusals.map(([bad]) => run(["serve"], { env: { ...env, ...bad } })))
    outcomes.forEach((outcome, index) => expectOneLineFailure(outcome, 2, refusals[index]![1]))
  }, 60_000)
})
