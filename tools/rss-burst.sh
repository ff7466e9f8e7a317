#!/usr/bin/env bash
# RSS of a worker process around a burst of 64 concurrent ~13 MiB requests, with the
# binaries' allocator (mimalloc) and with the system allocator, one after the other.
# Prints one line per allocator: baseline, peak during the burst, and 2 s after it.
set -euo pipefail
cd "$(dirname "$0")/.."
for features in "" "--no-default-features"; do
    # shellcheck disable=SC2086
    cargo test -q -p rcop-examples $features --test rss -- --nocapture 2>&1 | grep '^rss '
done
