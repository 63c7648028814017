/**
 * @dropshelf/server — the REST API over the core's `Directory`: the handlers of the HttpApi
 * contract (`@dropshelf/api`, re-exported here), the HTTP boundary and the Node server, plus the
 * RDAP availability check the reveal uses.
 */
export { Api, ApiErrors } from "@dropshelf/api"
export * as Boundary from "./http/Boundary.ts"
export * as ErrorMapping from "./http/ErrorMapping.ts"
export * as Health from "./http/Health.ts"
export * as RdapAvailability from "./RdapAvailability.ts"
export * as RememberedCursors from "./RememberedCursors.ts"
export * as Server from "./Server.ts"
export * as SmtpMail from "./SmtpMail.ts"
export * as Telemetry from "./Telemetry.ts"
export * as WebhookDelivery from "./WebhookDelivery.ts"
export * as WebAuthnSimple from "./WebAuthnSimple.ts"
