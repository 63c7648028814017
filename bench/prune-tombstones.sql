-- A pruning round on a seeded directory: every row 60 days old, one in 50 a tombstone.
-- Run on a scratch database after `dropshelf migrate` and `dropshelf seed --listings 300000`
-- (docs/performance.md, "Pruning tombstones"); it rewrites the rows' stamps. In each
-- transaction the first DELETE is a first round (tombstones to delete), the second an hourly
-- round after it (nothing left past the horizon); both are rolled back.
ALTER TABLE listings DISABLE TRIGGER listings_stamp_updated_at;
UPDATE listings SET updated_at = now() - interval '60 days',
  status = CASE WHEN hashtext(id) % 50 = 0 THEN 'delisted' ELSE status END;
ALTER TABLE listings ENABLE TRIGGER listings_stamp_updated_at;
VACUUM ANALYZE listings;
SELECT status, count(*) FROM listings GROUP BY status ORDER BY status;
-- With the partial index of migration 0005.
BEGIN;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) DELETE FROM listings
  WHERE status IN ('sold', 'blocked', 'delisted') AND updated_at < now() - interval '32 days';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) DELETE FROM listings
  WHERE status IN ('sold', 'blocked', 'delisted') AND updated_at < now() - interval '32 days';
ROLLBACK;
-- As the store runs it: a thousand tombstones per statement, until a statement finds fewer.
BEGIN;
\timing on
DO $$
DECLARE found integer;
BEGIN
  LOOP
    WITH doomed AS (
      SELECT id FROM listings
      WHERE status IN ('sold', 'blocked', 'delisted') AND updated_at < now() - interval '32 days'
      ORDER BY updated_at LIMIT 1000
    ), deleted AS (
      DELETE FROM listings AS l USING doomed
      WHERE l.id = doomed.id AND l.status IN ('sold', 'blocked', 'delisted') AND l.updated_at < now() - interval '32 days'
      RETURNING 1
    ) SELECT count(*) INTO found FROM doomed;
    EXIT WHEN found < 1000;
  END LOOP;
END $$;
\timing off
ROLLBACK;
-- Without it.
BEGIN;
DROP INDEX listings_tombstones;
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) DELETE FROM listings
  WHERE status IN ('sold', 'blocked', 'delisted') AND updated_at < now() - interval '32 days';
EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY ON) DELETE FROM listings
  WHERE status IN ('sold', 'blocked', 'delisted') AND updated_at < now() - interval '32 days';
ROLLBACK;
