#!/bin/sh
# PostgreSQL image init script (run once, when the data directory is created): the runtime role
# `weft_app` with the password in WEFT_APP_PASSWORD, so the Weft processes can log in over the
# network with scram-sha-256. The migrations create the role only when it is missing and give it
# its grants; its attributes here are the ones they would give it (login, nothing more), which
# every Weft server checks at boot.
set -eu
: "${WEFT_APP_PASSWORD:?set WEFT_APP_PASSWORD for the weft_app role}"
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -v pw="$WEFT_APP_PASSWORD" <<'SQL'
CREATE ROLE weft_app LOGIN NOSUPERUSER NOBYPASSRLS NOCREATEDB NOCREATEROLE PASSWORD :'pw';
SQL
