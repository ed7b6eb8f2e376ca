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
