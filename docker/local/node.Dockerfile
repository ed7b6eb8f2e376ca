# Stand-in for node:20-bookworm-slim: Debian's nodejs package (20.x in Debian 13) on the local root
# filesystem. Built by scripts/docker-local.sh with --network host (apt needs the network).
ARG BASE_IMAGE
FROM ${BASE_IMAGE}
RUN apt-get update \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nodejs \
 && rm -rf /var/lib/apt/lists/* \
 && node --version
CMD ["node"]
