/*
 * What a connected application may do. An API key may do everything its plan allows; a grant
 * (an assistant signed in with OAuth) only what the person consented to. `read` comes with
 * every grant; the others are the writes, each asked for and shown on its own.
 */

export const SCOPES = ["read", "reveal", "hold", "watch"] as const
export type Scope = typeof SCOPES[number]

/** What each scope lets an application do, as the consent page and the docs say it. */
export const SCOPE_DESCRIPTIONS: { readonly [S in Scope]: string } = {
  read: "search and read the directory, and see the account's holds, watches and usage",
  reveal: "reveal masked names, which spends the account's monthly reveals",
  hold: "hold listings, extend and end holds",
  watch: "create, change and delete watches that call your webhooks"
}

export const isScope = (text: string): text is Scope => (SCOPES as ReadonlyArray<string>).includes(text)

/** The known scopes of a space-separated OAuth `scope`, in `SCOPES` order, `read` always among them. */
export const scopesOf = (text: string | undefined): ReadonlyArray<Scope> => {
  const asked = new Set((text ?? "").split(" "))
  return SCOPES.filter((scope) => scope === "read" || asked.has(scope))
}

/** Whether a caller holding `granted` (`undefined`: an API key, every scope) may do what `needed` names. */
export const allows = (granted: ReadonlyArray<Scope> | undefined, needed: Scope): boolean =>
  granted === undefined || granted.includes(needed)
