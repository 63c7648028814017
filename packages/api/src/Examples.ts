/*
 * The ids the API reference uses in its examples. Each names something `npm start`'s demo
 * directory has (apps/cli/src/DemoFixtures.ts), so a snippet copied from `/docs` with the demo's
 * business key gets a 2xx, and a Postman collection generated from the document passes its
 * contract tests in the document's order on a fresh demo.
 */

/** A listing in the directory, visible to every plan, that the business demo account holds. */
export const LISTING_ID = "Ab3dE9xZ"

/** The business demo account's running hold on `LISTING_ID`, not yet extended. */
export const HOLD_ID = "h_3f9c2a7e5b1d4c8f9a0e6b2d7c4f1a95"

/** A watch of the business demo account with a webhook (paused) and one match: `EVENT_ID`. */
export const WATCH_ID = "wch_Tq7LmZ2xVb9RkP4sWc3N"

/** Another watch of the business demo account: the example of `DELETE /watches/{id}`, which later examples do not use. */
export const WATCH_TO_DELETE_ID = "wch_Hd8JfK2pQy6MnR1tXz5B"

/** The match of `WATCH_ID` on `LISTING_ID`, and its webhook event. */
export const EVENT_ID = "msg_8b1e4f2a9c7d4e3fa6b05d2c1e9f7a34"

/** The filters of `WATCH_ID`, as `POST /watches` takes them; `LISTING_ID` passes them. */
export const WATCH_QUERY = { tld: "com", rsMin: 40, category: "tech,food" } as const
