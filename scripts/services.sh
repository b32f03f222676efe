#!/usr/bin/env bash
# Starts the local servers the tests use when they are installed but not running:
# MariaDB (127.0.0.1:3306, root without a password), NATS with JetStream (127.0.0.1:4222),
# RabbitMQ (127.0.0.1:5672) and a Kafka-API broker (tansu, 127.0.0.1:9092, installed
# here); PgBouncer's binary (installed, not started); and the Python package the webhook tests' receiver verifies signatures with. Where one is not installed, nothing is started and its tests report it
# (a failure when required).
set -uo pipefail

listening() { (echo >"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

wait_for() {
    local port=$1 name=$2
    for _ in $(seq 1 60); do
        listening "$port" && { echo "== $name is up on 127.0.0.1:$port"; return 0; }
        sleep 1
    done
    echo "!! $name did not come up on 127.0.0.1:$port"
}

if ! listening 3306; then
    if command -v mariadbd >/dev/null 2>&1 || [ -x /usr/sbin/mariadbd ]; then
        echo "== starting mariadb"
        if command -v service >/dev/null 2>&1 && service mariadb start >/dev/null 2>&1; then
            :
        else
            mkdir -p /run/mysqld && chown mysql:mysql /run/mysqld 2>/dev/null
            start-stop-daemon --start --oknodo --background --exec /usr/sbin/mariadbd -- \
                --user=mysql --bind-address=127.0.0.1 --port=3306
        fi
        wait_for 3306 mariadb
    else
        echo "!! mariadb is not installed: the MariaDB tests will say so"
    fi
fi

if ! listening 4222; then
    if [ -x /usr/sbin/nats-server ]; then
        echo "== starting nats-server with JetStream"
        mkdir -p /var/lib/nats-server
        start-stop-daemon --start --oknodo --background --exec /usr/sbin/nats-server -- \
            -a 127.0.0.1 -p 4222 -js -sd /var/lib/nats-server -l /var/log/nats-server.log
        wait_for 4222 nats-server
    else
        echo "!! nats-server is not installed: the NATS tests will say so"
    fi
fi

if ! listening 5672; then
    if command -v rabbitmq-server >/dev/null 2>&1; then
        echo "== starting rabbitmq-server"
        rabbitmq-server -detached
        wait_for 5672 rabbitmq-server
    else
        echo "!! rabbitmq-server is not installed: the RabbitMQ tests will say so"
    fi
fi
# The Kafka tests' broker: tansu (a Kafka-API broker from crates.io), with its in-memory
# storage, on loopback only (its default listens on every interface). Installed with cargo
# once per machine (about 18 minutes of build on 2 cores); the outage tests start brokers
# of their own from the same binary.
tansu_bin() {
    command -v tansu 2>/dev/null && return 0
    local cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin/tansu"
    [ -x "$cargo_bin" ] && echo "$cargo_bin"
}
if [ -z "$(tansu_bin)" ] && command -v cargo >/dev/null 2>&1; then
    echo "== installing tansu 0.6.0 (the Kafka tests' broker; a long build, once per machine)"
    cargo install --locked tansu --version 0.6.0 --features dynostore \
        || echo "!! tansu did not install: the Kafka tests will say so"
fi
if ! listening 9092; then
    if tansu=$(tansu_bin) && [ -n "$tansu" ]; then
        echo "== starting tansu (Kafka API) on 127.0.0.1:9092"
        mkdir -p /var/log 2>/dev/null
        log=/var/log/tansu.log; [ -w /var/log ] || log=/tmp/tansu.log
        setsid nohup "$tansu" broker --storage-engine memory://tansu/ \
            --listener-url tcp://127.0.0.1:9092 --advertised-listener-url tcp://127.0.0.1:9092 \
            >"$log" 2>&1 </dev/null &
        wait_for 9092 tansu
    else
        echo "!! tansu is not installed: the Kafka tests will say so"
    fi
fi
# The webhook tests' receiver (outbox-webhook/tests/receiver.py) checks signatures with
# the standardwebhooks package from PyPI: an implementation of the scheme apart from ours.
if ! python3 -c 'import standardwebhooks' 2>/dev/null; then
    echo "== installing the standardwebhooks package (the webhook tests' receiver)"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore standardwebhooks==1.1.0 \
        || echo "!! standardwebhooks did not install: the webhook tests will say so"
fi
# The bench's peer queue (benches/peers/): pgqueuer and asyncpg at the versions its
# driver was verified with; the held-snapshot scenario runs the same rounds through it.
if ! python3 -c 'import pgqueuer, asyncpg' 2>/dev/null; then
    echo "== installing the bench's peer queue (benches/peers/requirements.txt)"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        -r "$(dirname "$0")/../benches/peers/requirements.txt" \
        || echo "!! the peer queue did not install: the bench will say so"
fi
# The pooler tests (outbox-postgres tests/it/pooler, outbox-cli tests/pooler.rs) start
# Debian's PgBouncer (1.18 on bookworm: no max_prepared_statements) in transaction mode in
# front of a throwaway cluster; only the binary is needed, the package's own service stays off.
if ! command -v pgbouncer >/dev/null 2>&1 && [ ! -x /usr/sbin/pgbouncer ] && command -v apt-get >/dev/null 2>&1; then
    echo "== installing pgbouncer (the pooler tests)"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq pgbouncer >/dev/null; } \
        || echo "!! pgbouncer did not install: the pooler tests will say so"
    # The package starts its own service on 6432; the tests start their own instances.
    { command -v service >/dev/null 2>&1 && $sudo service pgbouncer stop >/dev/null 2>&1; } || true
fi
# The dashboard's browser tests (outbox-cli/tests/ui.rs) drive Debian's chromium with
# playwright-core from npm, at the version outbox-cli/tests/browser/package-lock.json pins.
if ! command -v chromium >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
    echo "== installing chromium (the dashboard's browser tests)"
    if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
    { $sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null; } \
        || echo "!! chromium did not install: the browser tests will say so"
fi
browser_tests="$(dirname "$0")/../outbox-cli/tests/browser"
if [ ! -d "$browser_tests/node_modules/playwright-core" ] && command -v npm >/dev/null 2>&1; then
    echo "== installing playwright-core (the dashboard's browser tests)"
    (cd "$browser_tests" && npm ci --no-audit --no-fund --silent) \
        || echo "!! playwright-core did not install: the browser tests will say so"
fi
exit 0
