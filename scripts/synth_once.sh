# Sourced by scripts/render_eval_sets.sh and render_train_sets.sh (run from the repo root).
# `once DIR CMD...` runs CMD to fill DIR unless DIR holds its .done marker (an interrupted
# set is made again); `synth NAME ARGS...` renders datasets/NAME with `spraycv synth ARGS...`
# on one worker, once.
once() {
  local dir=$1
  shift
  [ -f "$dir/.done" ] && return 0
  "$@"
  touch "$dir/.done"
}
synth() {
  local out=$1
  shift
  once "datasets/$out" .venv/bin/spraycv synth --workers 1 --out "datasets/$out" "$@"
}
