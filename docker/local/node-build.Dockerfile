# Build stage base for docker/Dockerfile: the local Node image plus npm and a C++ toolchain
# (zstd-napi builds from source).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends npm g++ make python3 \
 && rm -rf /var/lib/apt/lists/* \
 && npm --version
# node-gyp takes Node's headers from Debian's libnode-dev instead of downloading them
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends libnode-dev \
 && rm -rf /var/lib/apt/lists/* \
 && test -f /usr/include/node/common.gypi
ENV npm_config_nodedir=/usr
# The host npm's `cafile` (scripts/docker-local.sh copies it here; empty when the host has none), so
# that npm in the build trusts what the host's npm trusts (e.g. a TLS-inspecting proxy's CA).
COPY npm-ca.crt /usr/local/share/samsa/npm-ca.crt
RUN if [ -s /usr/local/share/samsa/npm-ca.crt ]; then npm config set --global cafile /usr/local/share/samsa/npm-ca.crt; fi
