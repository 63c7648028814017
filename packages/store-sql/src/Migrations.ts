import { ListingFilter, Masking } from "@dropshelf/core"
import { Effect } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { json, textOrNull } from "./Rows.ts"

/*
 * Versioned schema changes, applied in id order by effect/sql's Migrator, which records them
 * in `effect_sql_migrations` and takes an exclusive lock on that table, so two instances
 * starting at once apply each migration once. Every statement is sent on its own: the
 * extended protocol takes one command per message. Never edit a migration once released;
 * add the next one.
 */

const statements = (...sql: ReadonlyArray<string>) =>
  Effect.gen(function*() {
    const client = yield* SqlClient.SqlClient
    for (const statement of sql) yield* client.unsafe(statement)
  })

const initial = statements(
  // Trusted extensions (PG 13+): a database owner may create them. PGlite ships both.
  `CREATE EXTENSION IF NOT EXISTS btree_gist`,
  `CREATE EXTENSION IF NOT EXISTS pg_trgm`,

  `CREATE TABLE accounts (
    id text PRIMARY KEY,
    name text NOT NULL,
    plan text NOT NULL CHECK (plan IN ('free', 'pro', 'business', 'lapsed')),
    created_at timestamptz NOT NULL
  )`,

  `CREATE TABLE api_keys (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    name text NOT NULL,
    prefix text NOT NULL UNIQUE,
    digest text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz,
    revoked_at timestamptz
  )`,
  `CREATE INDEX api_keys_live_by_account ON api_keys (account_id) WHERE revoked_at IS NULL`,

  // Ids compare byte-wise (COLLATE "C"), as the core and every client compare them.
  // tld, published_value_cents, citability_score and search_text are derived at write time
  // by the core's own functions, so filters compare plain columns.
  `CREATE TABLE listings (
    id text COLLATE "C" PRIMARY KEY,
    domain text NOT NULL,
    tier text NOT NULL CHECK (tier IN ('featured', 'regular', 'open')),
    status text NOT NULL CHECK (status IN ('active', 'draft', 'blocked', 'sold', 'delisted')),
    discovered_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    estimated_value_cents bigint,
    published_value_cents bigint NOT NULL,
    category text,
    age_years integer,
    backlinks bigint,
    referring_domains bigint,
    domain_authority integer,
    snapshots bigint,
    directory_score integer,
    spam text CHECK (spam IN ('low', 'moderate')),
    linked_by jsonb NOT NULL,
    tags jsonb NOT NULL,
    blurb text,
    source text,
    agent_citability jsonb,
    citability_score integer,
    featured_rank integer,
    availability_checked_at timestamptz,
    mask_hint text,
    word_count integer NOT NULL,
    tld text NOT NULL,
    search_text text NOT NULL
  )`,

  // The database stamps updated_at, never the application: the since feed's watermark must
  // come from one clock, and clock_timestamp() is the time of the write itself.
  `CREATE FUNCTION dropshelf_stamp_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    NEW.updated_at := date_trunc('milliseconds', clock_timestamp());
    RETURN NEW;
  END
  $$`,
  `CREATE TRIGGER listings_stamp_updated_at BEFORE INSERT OR UPDATE ON listings
    FOR EACH ROW EXECUTE FUNCTION dropshelf_stamp_updated_at()`,

  `CREATE INDEX listings_latest ON listings (discovered_at DESC, id) WHERE status = 'active'`,
  `CREATE INDEX listings_since ON listings (updated_at, id)`,
  `CREATE INDEX listings_tld ON listings (tld, id) WHERE status = 'active'`,
  `CREATE INDEX listings_category ON listings (category, id) WHERE status = 'active'`,
  `CREATE INDEX listings_source ON listings (source, id) WHERE status = 'active'`,
  `CREATE INDEX listings_price ON listings (published_value_cents) WHERE status = 'active'`,
  `CREATE INDEX listings_score ON listings (directory_score) WHERE status = 'active'`,
  `CREATE INDEX listings_checked ON listings (availability_checked_at) WHERE status = 'active'`,
  `CREATE INDEX listings_featured ON listings (id) WHERE status = 'active' AND featured_rank IS NOT NULL`,
  `CREATE INDEX listings_open ON listings (id) WHERE status = 'active' AND tier = 'open'`,
  `CREATE INDEX listings_search ON listings USING gin (search_text gin_trgm_ops)`,

  `CREATE TABLE reveals (
    account_id text NOT NULL,
    listing_id text COLLATE "C" NOT NULL,
    revealed_at timestamptz NOT NULL,
    charged boolean NOT NULL,
    PRIMARY KEY (account_id, listing_id)
  )`,
  `CREATE TABLE reveal_usage (
    account_id text NOT NULL,
    month text NOT NULL,
    used integer NOT NULL DEFAULT 0,
    PRIMARY KEY (account_id, month)
  )`,

  // ends_at is the effective end: the early end when there was one, else the scheduled one.
  // The exclusion constraint then allows one running hold per listing across all accounts,
  // and an expired hold frees its listing by the passing of time alone, with no sweeper.
  `CREATE TABLE holds (
    id text PRIMARY KEY,
    listing_id text COLLATE "C" NOT NULL,
    account_id text NOT NULL,
    held_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    extended boolean NOT NULL DEFAULT false,
    ended_at timestamptz,
    outcome text CHECK (outcome IN ('released', 'registered')),
    ends_at timestamptz GENERATED ALWAYS AS (GREATEST(held_at, COALESCE(ended_at, expires_at))) STORED,
    CONSTRAINT holds_one_running_per_listing
      EXCLUDE USING gist (listing_id WITH =, tstzrange(held_at, ends_at) WITH &&)
  )`,
  `CREATE INDEX holds_by_account ON holds (account_id, held_at DESC)`,
  `CREATE INDEX holds_by_account_listing ON holds (account_id, listing_id, ends_at DESC)`,

  `CREATE TABLE settings (
    key text PRIMARY KEY,
    value text NOT NULL
  )`
)

/*
 * 0002: updated_at becomes a strict row version: a write in the same millisecond as the row's
 * previous one moves it 1 ms past it, so (id, updated_at) names one content of a row and the
 * listing cache (ListingCache) can trust it. And a revoked key or a changed plan notifies
 * `dropshelf_auth`, so every server drops its cached key look-ups at once (KeyLookups).
 */
const rowVersionAndAuthNotify = statements(
  `CREATE OR REPLACE FUNCTION dropshelf_stamp_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    NEW.updated_at := date_trunc('milliseconds', clock_timestamp());
    IF TG_OP = 'UPDATE' AND NEW.updated_at <= OLD.updated_at THEN
      NEW.updated_at := OLD.updated_at + interval '1 millisecond';
    END IF;
    RETURN NEW;
  END
  $$`,
  `CREATE FUNCTION dropshelf_notify_auth() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    PERFORM pg_notify('dropshelf_auth', TG_TABLE_NAME);
    RETURN NULL;
  END
  $$`,
  `CREATE TRIGGER api_keys_notify_auth AFTER UPDATE OF revoked_at ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION dropshelf_notify_auth()`,
  `CREATE TRIGGER accounts_notify_auth AFTER UPDATE OF plan ON accounts
    FOR EACH STATEMENT EXECUTE FUNCTION dropshelf_notify_auth()`
)

/** Rows read per statement while reshaping names. */
const RESHAPE_CHUNK = 1000

/*
 * 0003: mask_hint, word_count and search_text are computed at write time; rows written before
 * invented labels became one word keep a mask that discloses fragments of the name. Recompute
 * them with the core's own functions and rewrite the rows whose shape changed (and only those,
 * so the since feed carries just them). A null mask_hint stays null for `masks backfill`.
 */
const reshapeNames = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  let after = ""
  while (true) {
    const rows = yield* sql<Record<string, unknown>>`SELECT id, domain, mask_hint, word_count, tags, category,
      blurb FROM listings WHERE id > ${after} ORDER BY id LIMIT ${RESHAPE_CHUNK}`
    if (rows.length === 0) return
    after = String(rows[rows.length - 1]!.id)
    const changed = rows.flatMap((row) => {
      const shape = Masking.nameShape(String(row.domain))
      const stored = textOrNull(row.mask_hint)
      const maskHint = stored === null ? null : shape.maskHint
      if (maskHint === stored && shape.wordCount === Number(row.word_count)) return []
      const searchText = ListingFilter.searchText({
        maskHint,
        tags: json(row.tags) as ReadonlyArray<string>,
        category: textOrNull(row.category),
        blurb: textOrNull(row.blurb)
      })
      return [{ id: row.id, mask_hint: maskHint, word_count: shape.wordCount, search_text: searchText }]
    })
    if (changed.length === 0) continue
    yield* sql`UPDATE listings AS l
      SET mask_hint = r.mask_hint, word_count = r.word_count, search_text = r.search_text
      FROM jsonb_to_recordset(${JSON.stringify(changed)}::jsonb)
        AS r(id text, mask_hint text, word_count integer, search_text text)
      WHERE l.id = r.id`
  }
})

/*
 * 0004: one record per account and idempotency key (SqlIdempotencyStore). The answer is kept as
 * the core wrote it, in text: jsonb would reorder its keys. `started_at` orders the pruning.
 */
const idempotencyKeys = statements(
  `CREATE TABLE idempotency_keys (
    account_id text NOT NULL,
    key text COLLATE "C" NOT NULL,
    fingerprint text NOT NULL,
    started_at timestamptz NOT NULL,
    outcome text,
    PRIMARY KEY (account_id, key)
  )`,
  `CREATE INDEX idempotency_keys_started ON idempotency_keys (started_at)`
)

/*
 * 0005: tombstones past the since feed's horizon are pruned (docs/decisions/0011-since-horizon.md).
 * A partial index of tombstones by updated_at lets the pruning touch only them: the since index
 * covers every row, and old active rows far outnumber tombstones.
 */
const sinceHorizon = statements(
  `CREATE INDEX listings_tombstones ON listings (updated_at) WHERE status IN ('sold', 'blocked', 'delisted')`
)

/*
 * 0006: watches (SqlWatchStore). Statement-level triggers on listings record a change event per
 * written row while any watch exists (every write path, COPY included, goes through them), and
 * count a listing's generations: a row that comes back from sold, blocked or delisted (to active
 * or draft) starts the next one. Matches are unique per (watch, listing, generation); a match's delivery
 * job is the outbox row written in the same transaction.
 */
const watches = statements(
  `CREATE TABLE watches (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    name text NOT NULL,
    query jsonb NOT NULL,
    paused boolean NOT NULL DEFAULT false,
    webhook_url text,
    webhook_secret text,
    webhook_previous_secret text,
    webhook_previous_until timestamptz,
    webhook_state text CHECK (webhook_state IN ('active', 'paused', 'disabled')),
    webhook_state_reason text,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
  )`,
  `CREATE INDEX watches_by_account ON watches (account_id, created_at, id)`,
  `CREATE TABLE listing_generations (
    listing_id text COLLATE "C" PRIMARY KEY,
    generation integer NOT NULL
  )`,
  `CREATE TABLE watch_events (
    seq bigserial PRIMARY KEY,
    listing_id text COLLATE "C" NOT NULL,
    due_at timestamptz NOT NULL,
    kind text NOT NULL CHECK (kind IN ('change', 'clock'))
  )`,
  `CREATE INDEX watch_events_due ON watch_events (due_at, seq)`,
  `CREATE TABLE watch_matches (
    seq bigserial PRIMARY KEY,
    id text NOT NULL UNIQUE,
    watch_id text NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
    listing_id text COLLATE "C" NOT NULL,
    generation integer NOT NULL,
    matched_at timestamptz NOT NULL,
    UNIQUE (watch_id, listing_id, generation)
  )`,
  `CREATE INDEX watch_matches_by_watch ON watch_matches (watch_id, seq)`,
  `CREATE TABLE watch_deliveries (
    event_id text PRIMARY KEY REFERENCES watch_matches (id) ON DELETE CASCADE,
    watch_id text NOT NULL REFERENCES watches (id) ON DELETE CASCADE,
    listing_id text COLLATE "C" NOT NULL,
    matched_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    state text NOT NULL CHECK (state IN ('pending', 'delivered', 'failed')),
    next_attempt_at timestamptz NOT NULL,
    manual boolean NOT NULL DEFAULT false,
    lease_until timestamptz
  )`,
  `CREATE INDEX watch_deliveries_due ON watch_deliveries (next_attempt_at) WHERE state = 'pending'`,
  `CREATE INDEX watch_deliveries_by_watch ON watch_deliveries (watch_id)`,
  `CREATE TABLE watch_delivery_attempts (
    event_id text NOT NULL REFERENCES watch_deliveries (event_id) ON DELETE CASCADE,
    watch_id text NOT NULL,
    attempt integer NOT NULL,
    attempted_at timestamptz NOT NULL,
    duration_ms integer NOT NULL,
    status_code integer,
    error text,
    PRIMARY KEY (event_id, attempt)
  )`,
  `CREATE INDEX watch_delivery_attempts_by_watch ON watch_delivery_attempts (watch_id, attempted_at DESC)`,
  `CREATE FUNCTION dropshelf_watch_listings_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM watches) THEN
      INSERT INTO watch_events (listing_id, due_at, kind) SELECT id, updated_at, 'change' FROM new_rows;
    END IF;
    RETURN NULL;
  END
  $$`,
  `CREATE FUNCTION dropshelf_watch_listings_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO listing_generations (listing_id, generation)
      SELECT n.id, 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE o.status IN ('sold', 'blocked', 'delisted') AND n.status NOT IN ('sold', 'blocked', 'delisted')
      ON CONFLICT (listing_id) DO UPDATE SET generation = listing_generations.generation + 1;
    IF EXISTS (SELECT 1 FROM watches) THEN
      INSERT INTO watch_events (listing_id, due_at, kind) SELECT id, updated_at, 'change' FROM new_rows;
    END IF;
    RETURN NULL;
  END
  $$`,
  `CREATE TRIGGER listings_watch_inserted AFTER INSERT ON listings REFERENCING NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION dropshelf_watch_listings_inserted()`,
  `CREATE TRIGGER listings_watch_updated AFTER UPDATE ON listings REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
    FOR EACH STATEMENT EXECUTE FUNCTION dropshelf_watch_listings_updated()`
)

/*
 * 0007: keys may expire (an expired key reads as revoked); a rotation brings the old key's expiry
 * forward. Other instances must drop their cached look-up when it does, so the notifying trigger
 * now fires on expiry changes too. The operator's key list reads one account's keys in creation order.
 */
const keyExpiry = statements(
  `ALTER TABLE api_keys ADD COLUMN expires_at timestamptz`,
  `DROP TRIGGER api_keys_notify_auth ON api_keys`,
  `CREATE TRIGGER api_keys_notify_auth AFTER UPDATE OF revoked_at, expires_at ON api_keys
    FOR EACH STATEMENT EXECUTE FUNCTION dropshelf_notify_auth()`,
  `CREATE INDEX api_keys_by_account ON api_keys (account_id, created_at)`
)

/*
 * 0010: list pages filter inside an index, not the table (docs/decisions/0509-read-paths.md). A
 * page's first statement reads only (id, updated_at, discovered_at) of its rows; with every
 * filtered column carried in the index of its order, Postgres tests each candidate in the index
 * (an index-only scan) instead of fetching a ~450-byte row from the heap for each one it then
 * throws away. The id order carries the search text too, so a common `q` term walks the index.
 * The partial indexes of open and featured rows, and those of price and score, are subsumed:
 * the covering index tests each (measured, no plan of any price or score filter used them any
 * more), and every index dropped is one less to keep up on each imported row.
 */
const FILTERED_COLUMNS = `updated_at, tld, category, spam, tier, published_value_cents, referring_domains, directory_score,
  featured_rank, age_years, citability_score, source, availability_checked_at`
const readIndexes = statements(
  `CREATE INDEX listings_active ON listings (id) INCLUDE (discovered_at, ${FILTERED_COLUMNS}, search_text) WHERE status = 'active'`,
  `DROP INDEX listings_latest`,
  `CREATE INDEX listings_latest ON listings (discovered_at DESC, id) INCLUDE (${FILTERED_COLUMNS}) WHERE status = 'active'`,
  `DROP INDEX listings_open`,
  `DROP INDEX listings_featured`,
  `DROP INDEX listings_price`,
  `DROP INDEX listings_score`
)

/*
 * 0011: a `q` page's plan follows how common the term is, which Postgres estimates by matching
 * the pattern against the search text's histogram. With the default 100 entries a term in one
 * listing of 40 may match none and be estimated at a handful of rows, and a page then collects
 * every match through the trigram index and sorts them instead of walking the index of its
 * order (0.6 s against 2 ms on a million listings). 300 entries judge every term above ~1 % within a
 * few times its count (test/planner.test.ts); ANALYZE samples 90 000 rows instead of 30 000.
 */
const searchStatistics = statements(`ALTER TABLE listings ALTER COLUMN search_text SET STATISTICS 300`)

/*
 * 0012: a listing's running hold is found through a btree on listing_id. The exclusion constraint's
 * GiST was the only index on it, and a probe of it reads several pages once holds have a history,
 * for every row of every page. Ended holds (an outcome) are never running, so they stay out.
 */
const runningHolds = statements(`CREATE INDEX holds_running ON holds (listing_id, held_at DESC) WHERE outcome IS NULL`)

/*
 * 0013: a page of one TLD in the newest-first order walks that TLD's part of an index in that
 * order. On listings_latest it tested every active row newer than its last one, of every TLD;
 * here only that TLD's (figures in docs/decisions/0509-read-paths.md). The other filters are
 * carried, as in listings_latest, so the scan stays index-only.
 */
const tldLatest = statements(
  `CREATE INDEX listings_tld_latest ON listings (tld, discovered_at DESC, id)
    INCLUDE (updated_at, category, spam, tier, published_value_cents, referring_domains, directory_score, featured_rank,
      age_years, citability_score, source, availability_checked_at) WHERE status = 'active'`
)

/*
 * 0014: a hold nobody ends runs out by the clock and keeps its null outcome, so holds_running
 * also held every hold that ever expired, and a look-up read (and fetched from the table) each
 * of a listing's past holds to find the one still running. Keyed by its end instead, the index
 * leads a look-up to the holds running at that instant only: its cost follows the running
 * holds, not the history (figures in docs/decisions/0509-read-paths.md).
 */
const runningHoldsByEnd = statements(
  // Built before the old one is dropped: the drop locks holds against reads until the commit.
  `CREATE INDEX holds_running_by_end ON holds (listing_id, expires_at DESC) WHERE outcome IS NULL`,
  `DROP INDEX holds_running`,
  `ALTER INDEX holds_running_by_end RENAME TO holds_running`
)

/*
 * 0015: a watch matches only what makes a listing readable to its account, or an operator's
 * change that makes a readable listing newly fit (docs/decisions/0012-watches.md), so the
 * events tell an insert from an update and carry the row before an update. The old row is kept
 * as jsonb (`to_jsonb`), read back with `jsonb_populate_record(NULL::listings, previous)`: a
 * column of the listings row type would block every later ALTER TABLE listings. Events recorded
 * before keep `change` and no previous version. Matches and attempts are pruned by age.
 */
const watchEventVersions = statements(
  `ALTER TABLE watch_events ADD COLUMN previous jsonb`,
  `ALTER TABLE watch_events DROP CONSTRAINT watch_events_kind_check`,
  `ALTER TABLE watch_events ADD CONSTRAINT watch_events_kind_check CHECK (kind IN ('change', 'clock', 'insert', 'update'))`,
  `CREATE OR REPLACE FUNCTION dropshelf_watch_listings_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    IF EXISTS (SELECT 1 FROM watches) THEN
      INSERT INTO watch_events (listing_id, due_at, kind) SELECT id, updated_at, 'insert' FROM new_rows;
    END IF;
    RETURN NULL;
  END
  $$`,
  `CREATE OR REPLACE FUNCTION dropshelf_watch_listings_updated() RETURNS trigger LANGUAGE plpgsql AS $$
  BEGIN
    INSERT INTO listing_generations (listing_id, generation)
      SELECT n.id, 1 FROM new_rows n JOIN old_rows o ON o.id = n.id
      WHERE o.status IN ('sold', 'blocked', 'delisted') AND n.status NOT IN ('sold', 'blocked', 'delisted')
      ON CONFLICT (listing_id) DO UPDATE SET generation = listing_generations.generation + 1;
    IF EXISTS (SELECT 1 FROM watches) THEN
      INSERT INTO watch_events (listing_id, due_at, kind, previous)
        SELECT n.id, n.updated_at, 'update', to_jsonb(o) FROM new_rows n JOIN old_rows o ON o.id = n.id;
    END IF;
    RETURN NULL;
  END
  $$`,
  `CREATE INDEX watch_matches_by_time ON watch_matches (matched_at)`,
  `CREATE INDEX watch_delivery_attempts_by_time ON watch_delivery_attempts (attempted_at)`
)

/*
 * 0016: an account's owner signs in to the account area by this address. Two addresses that
 * differ in case are one owner's (core Email.key), so the unique index is on lower(email).
 */
const accountEmail = statements(
  `ALTER TABLE accounts ADD COLUMN email text`,
  `CREATE UNIQUE INDEX accounts_email ON accounts (lower(email)) WHERE email IS NOT NULL`
)

/*
 * 0017: the account area's one-time sign-in links and sessions, each stored as the SHA-256 of
 * its token (core Session.ts). Ending every session of an account reads its open ones by index.
 */
const sessions = statements(
  `CREATE TABLE sign_in_links (
    digest text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at timestamptz
  )`,
  `CREATE TABLE sessions (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    digest text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    last_seen_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    ended_at timestamptz
  )`,
  `CREATE INDEX sessions_open_by_account ON sessions (account_id) WHERE ended_at IS NULL`
)

/*
 * 0019: passkeys of the account area (core Passkey.ts) and the challenges of their ceremonies,
 * each kept until it is answered or the next challenge finds it expired.
 */
const passkeys = statements(
  `CREATE TABLE passkeys (
    id text PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    name text NOT NULL,
    public_key text NOT NULL,
    counter bigint NOT NULL,
    transports jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    last_used_at timestamptz
  )`,
  `CREATE INDEX passkeys_by_account ON passkeys (account_id)`,
  `CREATE TABLE passkey_challenges (
    id text PRIMARY KEY,
    purpose text NOT NULL CHECK (purpose IN ('register', 'authenticate')),
    challenge text NOT NULL,
    session_id text REFERENCES sessions (id),
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL
  )`,
  `CREATE INDEX passkey_challenges_by_expiry ON passkey_challenges (expires_at)`
)

/*
 * 0020: each account's security log (core SecurityEvent.ts), appended to by the key and session
 * use cases and read newest first by account. The kind is open text: later parts add kinds.
 */
const securityEvents = statements(
  `CREATE TABLE security_events (
    id bigserial PRIMARY KEY,
    account_id text NOT NULL REFERENCES accounts (id),
    kind text NOT NULL,
    at timestamptz NOT NULL,
    detail text
  )`,
  `CREATE INDEX security_events_by_account ON security_events (account_id, id DESC)`
)

/*
 * 0021: connected applications. A key that is an OAuth grant carries its application (client,
 * grant id, scopes) as JSON; the authorization server's documents (clients, interactions, codes,
 * tokens, grants) live in one table, each found by kind and id, a grant's all by its id. A
 * document is JSON text, not jsonb: jsonb refuses a NUL escape a client's metadata may carry.
 */
const authorizations = statements(
  `ALTER TABLE api_keys ADD COLUMN application jsonb`,
  `CREATE TABLE authorization_documents (
    kind text NOT NULL,
    id text NOT NULL,
    payload text NOT NULL,
    grant_id text,
    uid text,
    user_code text,
    expires_at timestamptz,
    consumed_at timestamptz,
    PRIMARY KEY (kind, id)
  )`,
  `CREATE INDEX authorization_documents_by_grant ON authorization_documents (grant_id) WHERE grant_id IS NOT NULL`,
  `CREATE INDEX authorization_documents_by_uid ON authorization_documents (kind, uid) WHERE uid IS NOT NULL`,
  `CREATE INDEX authorization_documents_by_user_code ON authorization_documents (kind, user_code) WHERE user_code IS NOT NULL`,
  `CREATE INDEX authorization_documents_by_expiry ON authorization_documents (expires_at) WHERE expires_at IS NOT NULL`
)

/*
 * 0022: `recommended` asks whether a listing is linked from anywhere. Read from linked_by, that
 * took each candidate row from the table; as a stored column carried in the indexes of the
 * orders, a `recommended` page is tested inside the index like every other filter (0010).
 */
const LINKED_COLUMNS = `${FILTERED_COLUMNS}, linked`
const linkedInIndexes = statements(
  `ALTER TABLE listings ADD COLUMN linked boolean GENERATED ALWAYS AS (jsonb_array_length(linked_by) > 0) STORED`,
  `DROP INDEX listings_active`,
  `CREATE INDEX listings_active ON listings (id) INCLUDE (discovered_at, ${LINKED_COLUMNS}, search_text) WHERE status = 'active'`,
  `DROP INDEX listings_latest`,
  `CREATE INDEX listings_latest ON listings (discovered_at DESC, id) INCLUDE (${LINKED_COLUMNS}) WHERE status = 'active'`,
  `DROP INDEX listings_tld_latest`,
  `CREATE INDEX listings_tld_latest ON listings (tld, discovered_at DESC, id) INCLUDE (${LINKED_COLUMNS.replace("tld, ", "")})
    WHERE status = 'active'`
)

/** Every migration, keyed `<id>_<name>`; the Migrator runs the ones newer than the latest applied. */
export const migrations: Record<string, Effect.Effect<void, unknown, SqlClient.SqlClient>> = {
  "0001_initial": initial,
  "0002_row_version_and_auth_notify": rowVersionAndAuthNotify,
  "0003_reshape_invented_names": reshapeNames,
  "0004_idempotency_keys": idempotencyKeys,
  "0005_since_horizon": sinceHorizon,
  "0006_watches": watches,
  "0007_key_expiry": keyExpiry,
  "0010_read_indexes": readIndexes,
  "0011_search_statistics": searchStatistics,
  "0012_running_holds": runningHolds,
  "0013_tld_latest": tldLatest,
  "0014_running_holds_by_end": runningHoldsByEnd,
  "0015_watch_event_versions": watchEventVersions,
  "0016_account_email": accountEmail,
  "0017_sessions": sessions,
  "0019_passkeys": passkeys,
  "0020_security_events": securityEvents,
  "0021_authorizations": authorizations,
  "0022_linked_in_indexes": linkedInIndexes
}

const run = Migrator.make({})

/*
 * Migrations that write listings anew: the table's visibility map starts empty, so until a
 * vacuum every index-only page read would fetch each row from the table too; and its
 * statistics are gone. A vacuum cannot run inside a migration's transaction: it runs after.
 */
const REWRITE_LISTINGS = new Set(["0022_linked_in_indexes"])

/** Applies pending migrations; returns the names applied by this call (empty when up to date). */
export const migrate: Effect.Effect<ReadonlyArray<string>, never, SqlClient.SqlClient> = run({
  loader: Migrator.fromRecord(migrations)
}).pipe(
  Effect.map((applied) => applied.map(([id, name]) => `${String(id).padStart(4, "0")}_${name}`)),
  Effect.tap((applied) =>
    applied.some((name) => REWRITE_LISTINGS.has(name))
      ? Effect.flatMap(SqlClient.SqlClient, (sql) => sql`VACUUM (ANALYZE) listings`)
      : Effect.void
  ),
  Effect.orDie
)
