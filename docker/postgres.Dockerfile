# PostgreSQL for lookup tables and the tests: Debian's postgresql package on the debootstrap
# base image (docker/make-base-image.sh), so no image registry is needed. Build it with
# docker/build-postgres.sh; BASE_IMAGE may be any Debian bookworm image (e.g. debian:bookworm-slim).
#
# Like the official postgres image: POSTGRES_USER / POSTGRES_PASSWORD / POSTGRES_DB (default
# tableapi / tableapi / tableapi), data in /var/lib/postgresql/data, port 5432, and the log line
# "database system is ready to accept connections" once it serves clients.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ENV LANG=C.UTF-8
RUN set -eu; \
    export DEBIAN_FRONTEND=noninteractive; \
    apt-get update; \
    apt-get install -y --no-install-recommends postgresql-15; \
    rm -rf /var/lib/apt/lists/*; \
    install -d -o postgres -g postgres -m 0700 /var/lib/postgresql/data
COPY postgres-entrypoint.sh /usr/local/bin/postgres-entrypoint.sh
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
USER postgres
EXPOSE 5432
HEALTHCHECK --interval=2s --timeout=3s --start-period=30s --retries=30 \
    CMD ["pg_isready", "-h", "127.0.0.1", "-p", "5432"]
ENTRYPOINT ["/bin/sh", "/usr/local/bin/postgres-entrypoint.sh"]
