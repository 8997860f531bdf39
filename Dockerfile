# One image for every Weft role: `weft api`, `weft worker`, `weft scheduler`, `weft migrate`,
# `weft admin …` and `weft dev` (all in one). The role is the command:
#   docker run weft api        docker run weft worker --queues http
# docker-compose.yml runs PostgreSQL, Redis, a one-shot migration and each role with health checks.
#
# CODE isolation (python3 and node under bubblewrap) and what the worker's container needs
# ----------------------------------------------------------------------------------------------
# A worker confines each CODE execution only when all of this holds; otherwise it says what is
# missing in its start-up line `CODE isolation: …` and fails every CODE attempt (HTTP nodes run
# as usual), unless WEFT_CODE_UNCONFINED=1 (local development only).
#   - It runs as root in its container (`user: "0:0"` in docker-compose.yml; the image's default
#     user is the unprivileged `weft`, which api, scheduler and migrate keep): each execution
#     gets a uid of its own, switched to with setpriv, from a block of 1,024 uids at 2,000,000,000
#     and up that the worker claims in /run/weft.
#   - bubblewrap can create pid, mount, network, IPC and UTS namespaces and mount a fresh /proc
#     and tmpfs in them. Docker's defaults refuse that: its seccomp profile lets unshare, clone
#     with namespace flags and mount through only with CAP_SYS_ADMIN, and its AppArmor profile
#     denies mount. The sandbox does not need unprivileged user namespaces: as root it creates
#     the namespaces itself, and its own seccomp filter then refuses user namespaces and keyrings
#     to the code.
#   - A writable cgroup (v2 with the memory and pids controllers, or v1 memory and pids) for the
#     memory and process limits of an execution as a whole. Docker mounts /sys/fs/cgroup
#     read-only unless the container is privileged.
#   - util-linux's setpriv and prlimit (in the base image: util-linux is essential in Debian),
#     bubblewrap and python3 from Debian, node from the base image (/usr/local, inside the
#     read-only /usr the sandbox shows).
#   So docker-compose.yml runs the worker `privileged: true`, which gives all of the above (a
#   writable cgroup namespace of its own included). A narrower set that should let bubblewrap
#   build its namespaces is `--cap-add SYS_ADMIN --security-opt seccomp=unconfined
#   --security-opt apparmor=unconfined` (plus `--security-opt systempaths=unconfined` where the
#   kernel refuses a fresh /proc over Docker's masked paths), but the cgroup stays read-only
#   there, so the worker still refuses CODE without WEFT_CODE_UNCONFINED=1. Either way, run the
#   workers of untrusted tenants on hosts (or VMs) of their own: a privileged root container
#   is one kernel bug away from its host, and the sandbox is what stands in between. See
#   docs/OPERATIONS.md, "The CODE worker's privileges".
# What was checked without a container engine: the runtime stage's packages and production-only
# dependencies run `weft migrate`, `api`, `worker` (CODE confined, as root) and `scheduler` on
# Debian bookworm. Not checked: a build of this file, and which of the options above a given
# host's Docker, kernel and AppArmor need (the worker's start-up line tells).

# The base image of both stages. The default is a tag, which moves with Debian and Node patch
# releases. For a build that does not change under you, pin it by digest: look the digest up with
#   docker buildx imagetools inspect node:20.20-bookworm-slim
# and build with --build-arg NODE_IMAGE=node:20.20-bookworm-slim@sha256:<digest> (docker-compose.yml
# passes WEFT_NODE_IMAGE through to it). Bump the digest deliberately, after a rebuild and tests.
ARG NODE_IMAGE=node:20.20-bookworm-slim

# ---- build: every dependency, TypeScript compiled to dist/ ------------------------------------
FROM ${NODE_IMAGE} AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci
COPY . .
RUN npm run build

# ---- runtime: production dependencies, the compiled apps and libraries, the CODE tools -------
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 bubblewrap \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 weft \
 && useradd --system --uid 10001 --gid weft --home-dir /app --shell /usr/sbin/nologin weft
WORKDIR /app
# The ops listener (WEFT_METRICS_PORT: /metrics, /readyz, /healthz) listens on 127.0.0.1 unless
# told otherwise; in a container, probes and scrapers come from outside it (the kubelet, a
# Prometheus on the compose network), so the image listens on every interface of the
# container. It is published only where you map its port: do not map it to the internet.
ENV NODE_ENV=production WEFT_METRICS_HOST=0.0.0.0
COPY package.json package-lock.json ./
RUN npm ci --omit=dev \
 && npm cache clean --force
COPY --from=build /app/dist/apps ./dist/apps
COPY --from=build /app/dist/libs ./dist/libs
# The web console's bundle, served by the API at /.
COPY --from=build /app/dist/console ./dist/console
USER weft
# 4000: the GraphQL API (weft api, weft dev) and a bare GET /healthz. 9464: the ops listener of
# every process when WEFT_METRICS_PORT=9464 (metrics and readiness: keep it private).
EXPOSE 4000 9464
ENTRYPOINT ["node", "dist/apps/cli/src/main.js"]
# `weft dev` listens on 127.0.0.1 unless told otherwise, which a container's port mapping cannot
# reach; `weft api` listens on every interface by default.
CMD ["dev", "--host", "0.0.0.0"]
