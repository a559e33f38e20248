#!/usr/bin/env bash
# Installs Debian's chromium package for the viewer's browser test
# (cmd/yutenv/view_browser_test.go). Safe to run again: it does nothing when a
# chromium binary is already on PATH. Needs root (CI and developer machines
# run as root) and Debian's package mirror.
set -euo pipefail

if command -v chromium >/dev/null 2>&1; then
	echo "install-chromium: $(command -v chromium) already installed"
	exit 0
fi
SUDO=""
if [ "$(id -u)" -ne 0 ]; then
	SUDO="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
# fonts-dejavu-core: the page and the board's text need a sans-serif font in a headless run.
$SUDO apt-get install -y -qq --no-install-recommends chromium fonts-dejavu-core >/dev/null
echo "install-chromium: installed $(chromium --version 2>/dev/null || echo chromium)"
