#!/usr/bin/env bash
# Builds the release binary: static (CGO_ENABLED=0), without symbol tables
# or paths of the build machine, its version stamped; and a tarball with
# install.sh, the systemd unit and the default configuration.
#
#   scripts/release.sh [VERSION]        (default: git describe, or 0.0.0-dev)
#   TAGS=norocketmq scripts/release.sh   a build without the rocketmq
#                                        connector (4.3 MB and about 4 MB of
#                                        memory less; docs/operations.md)
#
# The tag grpcnotrace leaves out gRPC's request tracing pages
# (golang.org/x/net/trace), which sluice never serves: their templates
# (text/template looks methods up by name) would make the linker keep
# every exported method of every type, 7 MB of the binary.
#
# Output: dist/sluice (the binary) and dist/sluice-VERSION-linux-ARCH.tar.gz.
set -euo pipefail
cd "$(dirname "$0")/.."
version=${1:-$(git describe --tags --always --dirty 2>/dev/null || echo 0.0.0-dev)}
goos=$(go env GOOS)
goarch=$(go env GOARCH)
mkdir -p dist
CGO_ENABLED=0 go build -trimpath -tags "grpcnotrace ${TAGS:-}" \
  -ldflags "-s -w -X github.com/sluicesql/sluice.Version=${version}" \
  -o dist/sluice ./cmd/sluice
pkg="sluice-${version}-${goos}-${goarch}"
rm -rf "dist/${pkg}"
mkdir -p "dist/${pkg}"
cp dist/sluice scripts/install.sh scripts/sluice.service scripts/sluice.conf "dist/${pkg}/"
tar -C dist -czf "dist/${pkg}.tar.gz" "${pkg}"
rm -rf "dist/${pkg}"
size=$(stat -c %s dist/sluice)
echo "dist/sluice ${version} ${goos}/${goarch}: $((size / 1000000)).$(((size / 10000) % 100)) MB; dist/${pkg}.tar.gz"
