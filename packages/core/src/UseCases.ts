import { Layer } from "effect"
import { AccountArea } from "./accounts/AccountArea.ts"
import { AccountReveals } from "./accounts/AccountReveals.ts"
import { DirectoryArea } from "./accounts/DirectoryArea.ts"
import { EmailSignIn } from "./accounts/EmailSignIn.ts"
import { Passkeys } from "./accounts/Passkeys.ts"
import { SecurityLog } from "./accounts/SecurityLog.ts"
import { Sessions } from "./accounts/Sessions.ts"
import { Directory } from "./Directory.ts"
import { Operators } from "./Operators.ts"

/**
 * The use cases a served deployment runs, composed once: the directory's (what the API and MCP
 * call), the operator's, and the account area's. The ports (stores, crypto, WebAuthn, sign-in
 * mail) and the settings are the caller's to provide; `Watches` is added beside it where the
 * worker runs.
 */
export const layer = Layer.mergeAll(
  Directory.layer,
  AccountArea.layer.pipe(Layer.provideMerge(Operators.layer)),
  EmailSignIn.layer.pipe(Layer.provideMerge(Sessions.layer)),
  DirectoryArea.layer.pipe(Layer.provide(Directory.layer)),
  AccountReveals.layer.pipe(Layer.provide(Directory.layer), Layer.provide(Operators.layer)),
  SecurityLog.layer,
  Passkeys.layer
)
