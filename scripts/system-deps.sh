#!/usr/bin/env bash
# System packages the test suite needs, installed from Debian's packages when missing:
# Node.js + npm (the TypeScript MCP interop tests), libchromaprint1 (audio fingerprints), and
# Chromium with its driver (the memory-browser tests drive /usr/bin/chromium headless).
set -euo pipefail
missing=()
command -v node >/dev/null 2>&1 || missing+=(nodejs)
command -v npm >/dev/null 2>&1 || missing+=(npm)
ldconfig -p | grep libchromaprint >/dev/null || missing+=(libchromaprint1)
[ -x /usr/bin/chromium ] || missing+=(chromium)
[ -x /usr/bin/chromedriver ] || missing+=(chromium-driver)
if [ ${#missing[@]} -eq 0 ]; then
    exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "missing system packages: ${missing[*]} (install them with your package manager)" >&2
    exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
    sudo="sudo"
fi
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}"
