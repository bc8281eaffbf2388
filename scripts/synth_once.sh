# Sourced by scripts/render_eval_sets.sh and render_train_sets.sh (run from the repo root):
# `synth NAME ARGS...` renders datasets/NAME with `spraycv synth ARGS...` on one worker, once
# (a set with its .done marker is skipped; an interrupted one is rendered again).
synth() {
  local out=$1
  shift
  [ -f "datasets/$out/.done" ] && return 0
  .venv/bin/spraycv synth --workers 1 --out "datasets/$out" "$@"
  touch "datasets/$out/.done"
}
