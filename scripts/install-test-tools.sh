#!/usr/bin/env bash
# Installs the Debian packages that some tests drive for real, when their command is missing:
#   chromium (+ fonts)  the viewer's browser test (cmd/yutenv/view_browser_test.go)
#   qemu-aarch64-static the Linux aarch64 wheel's server run under user-mode emulation
#                       (python/tests/test_wheels.py), and the arm64 build's games compared
#                       with amd64's byte for byte (cmd/yutenv/xarch_test.go)
#   file                the format and architecture of every wheel's binary (test_wheels.py)
# Safe to run again: it installs nothing that is already there. Needs root (CI and developer
# machines run as root) and Debian's package mirror.
set -euo pipefail

want=()
command -v chromium >/dev/null 2>&1 || want+=(chromium fonts-dejavu-core)
command -v qemu-aarch64-static >/dev/null 2>&1 || want+=(qemu-user-static)
command -v file >/dev/null 2>&1 || want+=(file)
if [ ${#want[@]} -eq 0 ]; then
	echo "install-test-tools: chromium, qemu-aarch64-static and file already installed"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
echo "install-test-tools: installed ${want[*]}"
