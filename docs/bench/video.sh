#!/usr/bin/env bash
# Side by side on one clip with CDnet-style ground truth: rpca video at its
# defaults, and OpenCV's KNN and MOG2 background subtractors
# (../shared/peers/opencv/bgs.py: shadows off, the window fed twice as a
# warm-up, raw and 5×5 median blur), every mask scored by the same rules
# (docs/bench/cdnetscore). Needs python3-opencv. From the repository root:
#   bash docs/bench/video.sh [FRAMES [GROUNDTRUTH]] > video.log
# (default: ../shared/data/highway-dev). Times are whole processes; compare
# them as ratios within one run.
set -euo pipefail
IN=${1:-../shared/data/highway-dev/input}
GT=${2:-$(dirname "$IN")/groundtruth}
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
go build -o "$W/rpca" ./cmd/rpca
go build -o "$W/score" ./docs/bench/cdnetscore
t0=$(date +%s.%N)
"$W/rpca" video --in "$IN" --out "$W/rpca-out" --quiet --preview=false > /dev/null
t1=$(date +%s.%N)
echo "rpca video (defaults): $("$W/score" "$W/rpca-out/mask" "$GT"); $(echo "$t1 - $t0" | bc) s"
for algo in KNN MOG2; do
  t0=$(date +%s.%N)
  /usr/bin/python3 ../shared/peers/opencv/bgs.py --algo $algo --shadows 0 --in "$IN" --warm "$IN" --out "$W/$algo" --posts raw,med5 > /dev/null
  t1=$(date +%s.%N)
  for post in raw med5; do
    echo "OpenCV $algo, warm-up, $post: $("$W/score" "$W/$algo/$post/mask" "$GT"); $(echo "$t1 - $t0" | bc) s (both posts)"
  done
done
