#!/usr/bin/env bash
# Checks the Prometheus alert rules shipped in packaging/prometheus: their
# syntax (promtool check rules) and their unit tests (promtool test rules),
# installing Debian's prometheus package (it provides promtool) when missing.
# Usage: scripts/promtool.sh
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh prometheus:promtool
cd packaging/prometheus
promtool check rules ews-alerts.yml
promtool test rules ews-alerts.test.yml
