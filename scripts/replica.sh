#!/usr/bin/env bash
# A streaming replica of the local PostgreSQL for the read-replica tests: a second cluster made with
# pg_basebackup from the primary on 127.0.0.1:5432, started on REPLICA_PORT (5433). Idempotent:
# a running replica is left as it is, a stopped one started, a missing one made. Prints the
# replica's URL on stdout (the tests read it as DATABASE_REPLICA_URL); exit 1, saying why on
# stderr, where it cannot be made (the tests then skip).
set -uo pipefail

port="${REPLICA_PORT:-5433}"
primary_port="${PRIMARY_PORT:-5432}"
version="$(ls /etc/postgresql 2>/dev/null | sort -n | tail -1)"
bin="/usr/lib/postgresql/${version}/bin"
dir="${REPLICA_DIR:-/var/lib/postgresql/${version}/dropshelf-replica}"
url="postgres://postgres@127.0.0.1:${port}/postgres"
as_postgres() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }
fail() { echo "replica.sh: $*" >&2; exit 1; }

[ -n "$version" ] && [ -x "$bin/pg_ctl" ] || fail "no PostgreSQL server installed (/etc/postgresql, $bin)"
# `replica.sh stop`: the tests stop the replica under load, then start it again with `replica.sh`.
if [ "${1:-}" = stop ]; then
  as_postgres "$bin/pg_ctl" -D "$dir" -m fast -w stop >&2 || fail "the replica in $dir did not stop"
  exit 0
fi
pg_isready -q -h 127.0.0.1 -p "$primary_port" || fail "the primary on 127.0.0.1:$primary_port does not answer"
if pg_isready -q -h 127.0.0.1 -p "$port"; then
  [ "$(psql -h 127.0.0.1 -p "$port" -U postgres -Atc 'SELECT pg_is_in_recovery()' 2>/dev/null)" = t ] ||
    fail "127.0.0.1:$port answers but is not a standby"
  echo "$url"; exit 0
fi

# The primary lets the local postgres user stream (pg_basebackup and the standby's walreceiver).
hba="$(psql -h 127.0.0.1 -p "$primary_port" -U postgres -Atc 'SHOW hba_file')" || fail "cannot ask the primary for its pg_hba.conf"
if ! grep -Eq '^host[[:space:]]+replication[[:space:]]+(all|postgres)[[:space:]]+127\.0\.0\.1/32[[:space:]]+trust' "$hba"; then
  echo "host replication postgres 127.0.0.1/32 trust" >>"$hba" || fail "cannot add a replication entry to $hba"
  psql -h 127.0.0.1 -p "$primary_port" -U postgres -qAtc 'SELECT pg_reload_conf()' >/dev/null
fi

# A slot keeps the primary's WAL while the replica is stopped (the tests stop it), so it catches
# up when started again however much was written meanwhile. Made with the copy, dropped with it.
slot="dropshelf_replica_${port}"
if [ ! -f "$dir/standby.signal" ]; then
  rm -rf "$dir"
  psql -h 127.0.0.1 -p "$primary_port" -U postgres -qAtc \
    "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = '$slot'" >/dev/null
  mkdir -p "$(dirname "$dir")" && chown postgres: "$(dirname "$dir")" 2>/dev/null
  as_postgres pg_basebackup -h 127.0.0.1 -p "$primary_port" -U postgres -D "$dir" -R -C -S "$slot" -X stream -c fast >&2 ||
    fail "pg_basebackup failed"
  # Debian keeps a cluster's configuration under /etc: the copy gets files of its own.
  cat >"$dir/postgresql.conf" <<CONF
port = $port
listen_addresses = '127.0.0.1'
unix_socket_directories = '/var/run/postgresql'
shared_buffers = 32MB
max_connections = 100
hot_standby = on
hot_standby_feedback = on
CONF
  printf 'local all all trust\nhost all all 127.0.0.1/32 trust\n' >"$dir/pg_hba.conf"
  chown postgres: "$dir/postgresql.conf" "$dir/pg_hba.conf"
fi
as_postgres "$bin/pg_ctl" -D "$dir" -l "$dir/replica.log" -w -t 30 start >&2 || fail "the replica did not start (see $dir/replica.log)"
echo "$url"
